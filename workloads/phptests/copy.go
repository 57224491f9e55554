package phptests

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/patchproof/patchproof/internal/safefs"
)

// testRef finds the other test directories a test or include file uses:
// "../../pdo/tests/pdo_test.inc", "/../../../ext/pdo/tests/pdo_test.inc",
// and common.phpt's redirect to __DIR__.'/ext/pdo/tests'.
var testRef = regexp.MustCompile(`(?:\.\./\.\./(?:\.\./ext/)?|/ext/)([a-z0-9_]+)/tests\b`)

// harnessFiles are copied from the tree root besides the suites:
// run-tests.php, and php_version.h, by which run-tests' JUnit writer
// recognises the tree root when it names suites.
var harnessFiles = []string{"run-tests.php", "main/php_version.h"}

// maxTestsCopy bounds what copyTests reads of a tree: the harness and the
// three suites with the directories they use are about 10 MB.
const maxTestsCopy = 512 << 20

// copyTests makes a fresh copy in dst of the harness, the suites and every
// test directory they refer to, transitively. It returns the test
// directories copied. src is the tree under test: everything in it is read
// beneath it (a link out of it is an error, as it would be for the file
// run-tests.php if it were a link to a host file), and within a budget.
func copyTests(src, dst string, suiteDirs []string) ([]string, error) {
	if err := os.RemoveAll(dst); err != nil {
		return nil, fmt.Errorf("copy tests: %w", err)
	}
	tree, err := safefs.OpenTree(src, maxTestsCopy)
	if err != nil {
		return nil, fmt.Errorf("copy tests: %w", err)
	}
	defer tree.Close()
	for _, f := range harnessFiles {
		if _, err := tree.Stat(f); err != nil && f != "run-tests.php" {
			continue
		}
		if err := tree.CopyFile(f, filepath.Join(dst, filepath.FromSlash(f))); err != nil {
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
		refs, err := copyTestDir(tree, dir, filepath.Join(dst, filepath.FromSlash(dir)))
		if err != nil {
			return nil, fmt.Errorf("copy tests: %w", err)
		}
		for _, ext := range refs {
			d := path.Join("ext", ext, "tests")
			if fi, err := tree.Stat(d); !done[d] && err == nil && fi.IsDir() {
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

// copyTestDir copies the test directory dir of tree, leaving out what an
// earlier run of run-tests left next to the tests, and returns the
// extensions whose test directories its files refer to.
func copyTestDir(tree *safefs.Tree, dir, dst string) ([]string, error) {
	refs := make(map[string]bool)
	err := fs.WalkDir(tree.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() || isLeftover(tree, p) {
			return nil
		}
		if strings.HasSuffix(p, ".phpt") || strings.HasSuffix(p, ".inc") {
			b, err := tree.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range testRef.FindAllStringSubmatch(string(b), -1) {
				refs[m[1]] = true
			}
		}
		return tree.CopyFile(p, target)
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
func isLeftover(tree *safefs.Tree, p string) bool {
	for _, suf := range leftoverSuffixes {
		if base, ok := strings.CutSuffix(p, suf); ok {
			if _, err := tree.Stat(base + ".phpt"); err == nil {
				return true
			}
		}
	}
	return false
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
			rel, _ := filepath.Rel(tree, f)
			b, err := safefs.ReadFile(tree, rel, maxTestsCopy)
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
