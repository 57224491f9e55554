package safefs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// hostReads are the reads of a file by path (os.Open, os.ReadFile,
// os.OpenFile) that may stay outside this package, by file and function,
// each with why no code under test can have written or placed that file.
// Every other read of a file goes through safefs: a new one fails
// TestEveryReadIsSafe until it does, or is listed here with its reason.
var hostReads = map[string]string{
	"cmd/patchproof/plan.go:plan":         "the Actions event file: the runner's, before any PR code runs",
	"cmd/patchproof/plan.go:writeOutputs": "$GITHUB_OUTPUT, opened to append: the runner's",
	"builders/prune.go:markUsed":          "KEY.used beside a cache entry, touched by patchproof in its own cache",
	"internal/aptsource/aptsource.go:":    "the machine's apt sources under /etc",
	"internal/cachedir/cachedir.go:":      "the cache's lock and metadata files, written by patchproof",
	"internal/golden/golden.go:":          "golden files of the tests, in this repository",
	"internal/hostwatch/hostwatch.go:":    "/proc, the kernel's",
	"internal/proc/":                      "/proc, the kernel's",
	"pipeline/database.go:":               "the run's MariaDB log, opened to append by patchproof",
	"pipeline/demo/demo.go:":              "the demo's tarball (checksum-verified) and patch, patchproof's own",
	"pipeline/report/publish.go:":         "$GITHUB_STEP_SUMMARY, opened to append: the runner's",
	"pipeline/results/file.go:":           "results.json, written by patchproof (read with a bound)",
	"pipeline/run.go:machine":             "/proc and /etc/os-release, the kernel's and the machine's",
	"pipeline/doctor.go:paranoidCheck":    "/proc/sys/kernel/perf_event_paranoid, the kernel's",
	"pipeline/doctor.go:cgroupCheck":      "/proc/self/cgroup and cgroupfs, the kernel's",
	"workloads/bench/benchtxt.go:":        "/proc/cpuinfo, the kernel's",
	"workloads/cputime/":                  "/proc and cgroupfs, the kernel's",
	"workloads/httpd/container.go:":       "the server's output file, opened to append by patchproof, never through a link (O_NOFOLLOW)",
	"workloads/httpd/server.go:launch":    "the server's output file, opened to append by patchproof, never through a link (O_NOFOLLOW)",
	"workloads/lockcount/owner.go:":       "/proc/PID/maps and mem of the server, the kernel's",
	"workloads/mysqld/server.go:launch":   "the database's output file, opened to append by patchproof, never through a link (O_NOFOLLOW)",
	"workloads/perfprof/record.go:":       "/proc/PID/comm, the kernel's",
}

// readsByPath are the calls that open a file by its path, following a
// link wherever it points: debug/elf's Open among them (an object or
// binary of a build is read by the ABI check and the lock counter).
var readsByPath = map[string]bool{"os.Open": true, "os.ReadFile": true, "os.OpenFile": true, "elf.Open": true}

// TestEveryReadIsSafe finds every read of a file by path in the module's
// code (tests and this package apart) that hostReads does not allow.
func TestEveryReadIsSafe(t *testing.T) {
	root := moduleRoot(t)
	var bad []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "internal/safefs" || rel == "tools" {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Errorf("parse %s: %v", rel, err)
			return nil
		}
		for _, decl := range f.Decls {
			// A package-level declaration counts as a function of no
			// name: only a whole file's allowance covers it.
			name := ""
			if fn, ok := decl.(*ast.FuncDecl); ok {
				name = fn.Name.Name
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || !readsByPath[pkg.Name+"."+sel.Sel.Name] {
					return true
				}
				if !allowed(rel, name) {
					bad = append(bad, fset.Position(call.Pos()).String()[len(root)+1:]+" in "+name+": "+pkg.Name+"."+sel.Sel.Name)
				}
				return true
			})
		}
		return nil
	})
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s reads a file by path: use internal/safefs, or list it in hostReads with why the tree under test cannot have placed it", b)
	}
}

func allowed(file, fn string) bool {
	for k, why := range hostReads {
		if why == "" {
			continue
		}
		if k == file+":"+fn || k == file+":" || (strings.HasSuffix(k, "/") && strings.HasPrefix(file, k)) {
			return true
		}
	}
	return false
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = filepath.Dir(dir)
	}
}
