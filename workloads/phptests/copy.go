package phptests

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// testRef finds the other test directories a test or include file uses:
// "../../pdo/tests/pdo_test.inc", "/../../../ext/pdo/tests/pdo_test.inc",
// and common.phpt's redirect to __DIR__.'/ext/pdo/tests'.
var testRef = regexp.MustCompile(`(?:\.\./\.\./(?:\.\./ext/)?|/ext/)([a-z0-9_]+)/tests\b`)

// harnessFiles are copied from the tree root besides the suites:
// run-tests.php, and php_version.h, by which run-tests' JUnit writer
// recognises the tree root when it names suites.
var harnessFiles = []string{"run-tests.php", "main/php_version.h"}

// copyTests makes a fresh copy in dst of the harness, the suites and every
// test directory they refer to, transitively. It returns the test
// directories copied.
func copyTests(src, dst string, suiteDirs []string) ([]string, error) {
	if err := os.RemoveAll(dst); err != nil {
		return nil, fmt.Errorf("copy tests: %w", err)
	}
	for _, f := range harnessFiles {
		s := filepath.Join(src, filepath.FromSlash(f))
		if _, err := os.Stat(s); err != nil && f != "run-tests.php" {
			continue
		}
		if err := copyFile(s, filepath.Join(dst, filepath.FromSlash(f))); err != nil {
			return nil, fmt.Errorf("copy tests: %w", err)
		}
	}
	done := make(map[string]bool)
	queue := append([]string(nil), suiteDirs...)
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if done[dir] {
			continue
		}
		done[dir] = true
		refs, err := copyTestDir(filepath.Join(src, filepath.FromSlash(dir)), filepath.Join(dst, filepath.FromSlash(dir)))
		if err != nil {
			return nil, fmt.Errorf("copy tests: %w", err)
		}
		for _, ext := range refs {
			d := path.Join("ext", ext, "tests")
			if !done[d] && isDir(filepath.Join(src, filepath.FromSlash(d))) {
				queue = append(queue, d)
			}
		}
	}
	dirs := make([]string, 0, len(done))
	for d := range done {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs, nil
}

// copyTestDir copies a test directory, leaving out what an earlier run of
// run-tests left next to the tests, and returns the extensions whose test
// directories its files refer to.
func copyTestDir(src, dst string) ([]string, error) {
	refs := make(map[string]bool)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() || isLeftover(p) {
			return nil
		}
		if strings.HasSuffix(p, ".phpt") || strings.HasSuffix(p, ".inc") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range testRef.FindAllStringSubmatch(string(b), -1) {
				refs[m[1]] = true
			}
		}
		return copyFile(p, target)
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(refs))
	for r := range refs {
		out = append(out, r)
	}
	sort.Strings(out)
	return out, nil
}

// leftoverSuffixes are the files run-tests writes next to a test X.phpt.
var leftoverSuffixes = []string{".diff", ".out", ".exp", ".log", ".php", ".sh", ".mem", ".skip.php", ".clean.php", ".post", ".preload.php"}

// isLeftover reports whether p is a file run-tests made for a test next to
// it, not part of the tree.
func isLeftover(p string) bool {
	for _, suf := range leftoverSuffixes {
		if base, ok := strings.CutSuffix(p, suf); ok {
			if _, err := os.Stat(base + ".phpt"); err == nil {
				return true
			}
		}
	}
	return false
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// redirectTarget finds the directory a --REDIRECTTEST-- sends to:
// 'TESTS' => __DIR__.'/ext/pdo/tests'.
var redirectTarget = regexp.MustCompile(`'TESTS'\s*=>\s*__DIR__\s*\.\s*'/([^']+)'`)

// findRedirects maps each directory reached through a --REDIRECTTEST-- in
// the suites to the test that redirects there, e.g. ext/pdo/tests to
// ext/pdo_mysql/tests/common.phpt.
func findRedirects(tree string, suiteDirs []string) (map[string]string, error) {
	out := make(map[string]string)
	for _, s := range suiteDirs {
		files, err := filepath.Glob(filepath.Join(tree, filepath.FromSlash(s), "*.phpt"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			if !strings.Contains(string(b), "--REDIRECTTEST--") {
				continue
			}
			if m := redirectTarget.FindSubmatch(b); m != nil {
				dir := strings.TrimSuffix(string(m[1]), "/")
				if _, seen := out[dir]; !seen {
					out[dir] = path.Join(s, filepath.Base(f))
				}
			}
		}
	}
	return out, nil
}
