package phptests

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/workloads/mysqld"
)

// writeTree makes files (path -> content) under a new temporary directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// A miniature of php-src's layout, with the references the real suites
// make to each other (see ext/pdo_mysql/tests/common.phpt, table.inc and
// ext/pdo/tests/*.phpt in 8.2.32).
var miniTree = map[string]string{
	"run-tests.php":                          "<?php // harness",
	"main/php_version.h":                     "#define PHP_VERSION \"8.2.32\"",
	"ext/mysqli/tests/CONFLICTS":             "mysql\n",
	"ext/mysqli/tests/a.phpt":                "--TEST--\na\n--FILE--\n<?php require_once 'connect.inc';",
	"ext/mysqli/tests/a.diff":                "left by an earlier run",
	"ext/mysqli/tests/a.php":                 "left by an earlier run",
	"ext/mysqli/tests/connect.inc":           "<?php",
	"ext/mysqli/tests/foo/bar/bar.data":      "data",
	"ext/pdo_mysql/tests/common.phpt":        "--TEST--\nMySQL\n--REDIRECTTEST--\n$config = array(\n\t'TESTS' => __DIR__.'/ext/pdo/tests'\n);\nreturn $config;\n",
	"ext/pdo_mysql/tests/table.inc":          "<?php require dirname(__FILE__) . '/../../../ext/pdo/tests/pdo_test.inc';",
	"ext/pdo/tests/pdo_test.inc":             "<?php",
	"ext/pdo/tests/pdo_001.phpt":             "--TEST--\n--SKIPIF--\n<?php if (false !== getenv('REDIR_TEST_DIR')) require_once getenv('REDIR_TEST_DIR') . '../../pdo_mysql/tests/mysql_pdo_test.inc';",
	"ext/pdo/tests/pdo_002.phpt":             "--TEST--\n",
	"ext/standard/tests/file/unrelated.phpt": "--TEST--\n",
}

func TestCopyTests(t *testing.T) {
	src := writeTree(t, miniTree)
	dst := filepath.Join(t.TempDir(), "tree")
	// A stale copy is replaced, not merged.
	if err := os.MkdirAll(filepath.Join(dst, "ext/mysqli/tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dst, "ext/mysqli/tests/stale.diff"), nil, 0o644)

	dirs, err := copyTests(src, dst, []string{"ext/mysqli/tests", "ext/pdo_mysql/tests"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ext/mysqli/tests", "ext/pdo/tests", "ext/pdo_mysql/tests"}, dirs); diff != "" {
		t.Errorf("copied dirs (-want +got):\n%s", diff)
	}
	want := []string{
		"ext/mysqli/tests/CONFLICTS",
		"ext/mysqli/tests/a.phpt",
		"ext/mysqli/tests/connect.inc",
		"ext/mysqli/tests/foo/bar/bar.data",
		"ext/pdo/tests/pdo_001.phpt",
		"ext/pdo/tests/pdo_002.phpt",
		"ext/pdo/tests/pdo_test.inc",
		"ext/pdo_mysql/tests/common.phpt",
		"ext/pdo_mysql/tests/table.inc",
		"main/php_version.h",
		"run-tests.php",
	}
	if diff := cmp.Diff(want, listTree(t, dst)); diff != "" {
		t.Errorf("copied files (-want +got):\n%s", diff)
	}
	// The source tree is untouched.
	if diff := cmp.Diff(len(miniTree), len(listTree(t, src))); diff != "" {
		t.Errorf("source tree changed: %s", diff)
	}
}

func TestPlanTargets(t *testing.T) {
	tree := writeTree(t, miniTree)
	suiteDirs := []string{"ext/mysqli/tests", "ext/pdo_mysql/tests"}
	tests := []struct {
		name    string
		tests   []string
		want    []target
		wantErr bool
	}{
		{
			name:  "full run: one target per suite",
			want:  []target{{Suite: "ext/mysqli/tests", Args: []string{"ext/mysqli/tests"}}, {Suite: "ext/pdo_mysql/tests", Args: []string{"ext/pdo_mysql/tests"}}},
			tests: nil,
		},
		{
			name:  "re-run: redirected tests run through their redirecting test, in suite order",
			tests: []string{"ext/pdo/tests/pdo_002.phpt", "ext/mysqli/tests/a.phpt", "ext/pdo/tests/pdo_001.phpt"},
			want: []target{
				{Suite: "ext/mysqli/tests", Args: []string{"ext/mysqli/tests/a.phpt"}, Keep: []string{"ext/mysqli/tests/a.phpt"}},
				{Suite: "ext/pdo_mysql/tests", Args: []string{"ext/pdo_mysql/tests/common.phpt"}, Keep: []string{"ext/pdo/tests/pdo_002.phpt", "ext/pdo/tests/pdo_001.phpt"}},
			},
		},
		{
			name:    "a test outside the suites",
			tests:   []string{"ext/standard/tests/file/unrelated.phpt"},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planTargets(tree, suiteDirs, tt.tests)
			if (err != nil) != tt.wantErr {
				t.Fatalf("planTargets: err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("planTargets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvironment(t *testing.T) {
	parent := []string{"PATH=/usr/bin", "HOME=/root", "MYSQL_TEST_HOST=elsewhere", "PDOTEST_DSN=sqlite::memory:",
		"TEST_PHP_ARGS=-j8", "PHPRC=/etc/php", "TMPDIR=/var/tmp",
		// The CI's secrets never reach the tests: a test is the PR's code.
		"GITHUB_TOKEN=ghp_x", "GH_TOKEN=gho_y", "ACTIONS_RUNTIME_TOKEN=z", "RUNNER_TEMP=/t", "DOCKER_HOST=unix:///d.sock"}
	opt := Options{PHP: "/b/sapi/cli/php", WorkDir: "/w", DB: mysqld.Conn{Host: "127.0.0.1", Port: 3307, Socket: "/w/s.sock", User: "u", Password: "p", Database: "d1"}}
	// On a host: the parent's environment less the CI's and what steers the
	// tests, then the suites' own variables, all a container gets besides
	// PATH and HOME.
	got := hostEnv(parent, suiteEnv(opt, "/w/results/x.junit.xml"))
	want := []string{
		"PATH=/usr/bin", "HOME=/root",
		"NO_INTERACTION=1",
		"TEST_PHP_EXECUTABLE=/b/sapi/cli/php",
		"TEST_PHP_JUNIT=/w/results/x.junit.xml",
		"TMPDIR=/w/tmp",
		"MYSQL_TEST_HOST=127.0.0.1", "MYSQL_TEST_PORT=3307", "MYSQL_TEST_USER=u", "MYSQL_TEST_PASSWD=p",
		"MYSQL_TEST_DB=d1", "MYSQL_TEST_ENGINE=InnoDB", "MYSQL_TEST_SOCKET=/w/s.sock", "MYSQL_TEST_SKIP_CONNECT_FAILURE=1",
		"PDO_MYSQL_TEST_DSN=mysql:host=127.0.0.1;port=3307;dbname=d1",
		"PDO_MYSQL_TEST_USER=u", "PDO_MYSQL_TEST_PASS=p", "PDO_MYSQL_TEST_HOST=127.0.0.1", "PDO_MYSQL_TEST_PORT=3307",
		"PDO_MYSQL_TEST_DB=d1", "PDO_MYSQL_TEST_SOCKET=/w/s.sock", "PDO_MYSQL_TEST_ENGINE=InnoDB",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	src := writeTree(t, miniTree)
	php := filepath.Join(t.TempDir(), "php")
	os.WriteFile(php, []byte("#!/bin/sh\n"), 0o755)
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"no php", Options{SrcDir: src, WorkDir: t.TempDir()}, "no php"},
		{"php missing", Options{PHP: "/nonexistent/php", SrcDir: src, WorkDir: t.TempDir()}, "not an executable"},
		{"work dir inside the tree", Options{PHP: php, SrcDir: src, WorkDir: filepath.Join(src, "work")}, "inside the source tree"},
		{"unknown suite", Options{PHP: php, SrcDir: src, WorkDir: t.TempDir(), Suites: []string{"ext/nope/tests"}}, "not a directory"},
		{"no default suite", Options{PHP: php, SrcDir: writeTree(t, map[string]string{"run-tests.php": ""}), WorkDir: t.TempDir()}, "has none of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(t.Context(), tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// TestCopyTestsRefusesLinksOut: a head whose run-tests.php, a suite
// directory or a test is a link to a host file does not get that file's
// text into the copy, the error, or anything patchproof reports.
func TestCopyTestsRefusesLinksOut(t *testing.T) {
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "credentials")
	if err := os.WriteFile(secret, []byte("TOKEN=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, link, to string }{
		{"run-tests.php", "run-tests.php", secret},
		{"php_version.h", "main/php_version.h", secret},
		{"a suite's directory", "ext/pdo/tests", secretDir},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := writeTree(t, miniTree)
			link := filepath.Join(src, filepath.FromSlash(tt.link))
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tt.to, link); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "tree")
			_, err := copyTests(src, dst, []string{"ext/mysqli/tests", "ext/pdo_mysql/tests", "ext/pdo/tests"})
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("the error holds the host file: %v", err)
			}
			filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if b, _ := os.ReadFile(p); strings.Contains(string(b), "hunter2") {
						t.Errorf("the copy's %s holds the host file", p)
					}
				}
				return nil
			})
			if tt.link != "ext/pdo/tests" && err == nil {
				t.Errorf("a harness file linked out of the tree was copied without error")
			}
		})
	}
}
