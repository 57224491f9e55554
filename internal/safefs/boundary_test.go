package safefs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// touches are the calls that open, create or parse a file by its path or
// through a handle the caller opened: each follows a link wherever it
// points, reads without a bound, or parses what it is given without
// limits. Outside this package they are allowed only where trusted says
// why no code under test can have written or placed what they touch.
var touches = map[string]bool{
	"os.Create": true, "os.CreateTemp": true, "os.WriteFile": true, "os.OpenFile": true,
	"os.Open": true, "os.ReadFile": true,
	"(*os.Root).Create": true, "(*os.Root).OpenFile": true, "(*os.Root).WriteFile": true,
	"(*os.Root).Open": true, "(*os.Root).ReadFile": true,
	"debug/elf.Open": true, "debug/elf.NewFile": true,
	"(*debug/elf.File).DWARF": true, "(*debug/elf.Section).Data": true, "(*debug/elf.Section).Open": true,
}

// TestTheBoundaryIsTheOnlyWay type-checks the module's production code and
// fails on every call of touches outside this package that trusted does
// not list: a new one goes through safefs, or is listed with its reason.
func TestTheBoundaryIsTheOnlyWay(t *testing.T) {
	root := moduleRoot(t)
	pkgs := listPackages(t, root)
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if e := exports[path]; e != "" {
			return os.Open(e)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
	var found []string
	used := map[string]bool{}
	for _, p := range pkgs {
		if p.Module == nil || p.Module.Path != "github.com/patchproof/patchproof" || p.ImportPath == "github.com/patchproof/patchproof/internal/safefs" {
			continue
		}
		for _, call := range touchesIn(t, fset, imp, p) {
			if key, ok := allowedBy(call.file, call.fn); ok {
				used[key] = true
				continue
			}
			found = append(found, fmt.Sprintf("%s in %s: %s", call.pos, cmpOr(call.fn, "a package-level declaration"), call.name))
		}
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s touches a file outside internal/safefs: go through it, or list the place in trusted with why no code under test can have written or placed that file", f)
	}
	for key := range trusted {
		if !used[key] {
			t.Errorf("trusted lists %s, which touches no file: remove it", key)
		}
	}
}

type listedPackage struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	Module     *struct{ Path string }
}

// listPackages lists the module's packages and their dependencies with
// their export data (go list -export compiles what it has to).
func listPackages(t *testing.T, root string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,Module", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	var pkgs []listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

type touch struct {
	pos, file, fn, name string
}

// touchesIn returns the calls of touches in package p's files.
func touchesIn(t *testing.T, fset *token.FileSet, imp types.Importer, p listedPackage) []touch {
	t.Helper()
	root := moduleRoot(t)
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
		t.Fatalf("type-check %s: %v", p.ImportPath, err)
	}
	var out []touch
	for _, f := range files {
		rel, _ := filepath.Rel(root, fset.Position(f.Pos()).Filename)
		rel = filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			fn := ""
			if d, ok := decl.(*ast.FuncDecl); ok {
				fn = d.Name.Name
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				obj, ok := info.Uses[sel.Sel].(*types.Func)
				if !ok || !touches[obj.FullName()] {
					return true
				}
				pos := fset.Position(sel.Pos())
				out = append(out, touch{pos: fmt.Sprintf("%s:%d", rel, pos.Line), file: rel, fn: fn, name: obj.FullName()})
				return true
			})
		}
	}
	return out
}

// allowedBy returns the key of trusted that allows a touch in file's
// function fn: "file:fn", "file:" for a whole file, "dir/" for a tree.
func allowedBy(file, fn string) (string, bool) {
	for _, k := range []string{file + ":" + fn, file + ":"} {
		if _, ok := trusted[k]; ok {
			return k, true
		}
	}
	for k := range trusted {
		if strings.HasSuffix(k, "/") && strings.HasPrefix(file, k) {
			return k, true
		}
	}
	return "", false
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
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
