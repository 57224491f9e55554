package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/patchproof/patchproof/builders"
)

// The stage's log line names the servers and the conflict groups the
// builds' own CONFLICTS files give, with their suites, as kept apart.
func TestSuiteJobsText(t *testing.T) {
	build := func(files map[string]string) suiteJob {
		dir := t.TempDir()
		for name, body := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return suiteJob{build: &builders.Build{Dir: dir}}
	}
	php := build(map[string]string{
		"ext/mysqlnd/tests/001.phpt":    "",
		"ext/mysqli/tests/CONFLICTS":    "mysql\n",
		"ext/pdo_mysql/tests/CONFLICTS": "# the server\nmysql\n",
	})
	// A head that adds a group of its own to a suite.
	head := build(map[string]string{
		"ext/mysqli/tests/CONFLICTS": "mysql\nusers\n",
	})
	for _, tc := range []struct {
		name    string
		servers int
		jobs    []suiteJob
		want    string
	}{
		{"no CONFLICTS", 1, []suiteJob{build(nil)}, "jobs: 4, one MariaDB, one build at a time on it"},
		{"php-src's", 2, []suiteJob{php, php}, "jobs: 4, a MariaDB each (2 servers), a build's run alone on its server; conflict group mysql (ext/mysqli/tests, ext/pdo_mysql/tests) never shared by two builds"},
		{"a head's own", 2, []suiteJob{php, head}, "jobs: 4, a MariaDB each (2 servers), a build's run alone on its server; conflict group mysql (ext/mysqli/tests, ext/pdo_mysql/tests) never shared by two builds; conflict group users (ext/mysqli/tests) never shared by two builds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := suiteJobsText(4, tc.servers, tc.jobs); got != tc.want {
				t.Errorf("suiteJobsText = %q, want %q", got, tc.want)
			}
		})
	}
}
