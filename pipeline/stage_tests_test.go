package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/patchproof/patchproof/builders"
)

// The stage's log line names the conflict groups the builds' own CONFLICTS
// files give, with their suites, as run one build at a time.
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
		name string
		jobs []suiteJob
		want string
	}{
		{"no CONFLICTS", []suiteJob{build(nil)}, "jobs: 4"},
		{"php-src's", []suiteJob{php, php}, "jobs: 4, conflict group mysql: one build at a time (ext/mysqli/tests, ext/pdo_mysql/tests)"},
		{"a head's own", []suiteJob{php, head}, "jobs: 4, conflict group mysql: one build at a time (ext/mysqli/tests, ext/pdo_mysql/tests), conflict group users: one build at a time (ext/mysqli/tests)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := suiteJobsText(4, tc.jobs); got != tc.want {
				t.Errorf("suiteJobsText = %q, want %q", got, tc.want)
			}
		})
	}
}
