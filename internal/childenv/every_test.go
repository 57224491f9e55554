package childenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The rules below are read from the repository's source, every non-test
// file of the module:
//
//   - every command built with os/exec is assigned to a variable, and the
//     function that builds it sets its Env from this package (For or Clean,
//     directly or through a function of the same package that calls them):
//     one left to inherit patchproof's environment, or given one of its own
//     making, would hand the code under test whatever the CI put there;
//   - every container (a docker.Spec) that sets an environment starts it
//     from Container (docker.BaseEnv) and takes nothing from patchproof's;
//   - nothing else starts a process (os.StartProcess, syscall.Exec,
//     ForkExec) but internal/secretenv, which re-executes patchproof itself
//     without its secrets.
func TestEveryChildGetsTheAllowList(t *testing.T) {
	root := filepath.Join("..", "..")
	pkgs, err := parseModule(root)
	if err != nil {
		t.Fatal(err)
	}
	commands, specs := 0, 0
	for dir, files := range pkgs {
		funcs := map[string]*ast.BlockStmt{}
		for _, f := range files {
			for _, decl := range f.file.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
					funcs[fn.Name.Name] = fn.Body
				}
			}
		}
		fromChildenv := func(e ast.Expr) bool { return calls(e, funcs, isChildenvCall) }
		fromContainer := func(e ast.Expr) bool { return calls(e, funcs, isContainerBase) }
		for _, f := range files {
			for _, decl := range f.file.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				where := f.path + ": " + fn.Name.Name
				for _, c := range execCommands(fn.Body) {
					commands++
					switch {
					case c.name == "":
						t.Errorf("%s: an exec command not assigned to a variable, so its Env cannot be checked", where)
					case !setsEnvFrom(fn.Body, c.name, fromChildenv):
						t.Errorf("%s: %s is an exec command without an Env from childenv", where, c.name)
					}
				}
				for _, env := range specEnvs(fn.Body, f.file.Name.Name) {
					specs++
					if env == nil {
						continue
					}
					if !fromContainer(env) || directly(env, isHostEnviron) {
						t.Errorf("%s: a docker.Spec whose Env does not start from docker.BaseEnv or takes patchproof's", where)
					}
				}
				if filepath.ToSlash(dir) != filepath.ToSlash(filepath.Join(root, "internal", "secretenv")) && directly(fn.Body, isProcessStart) {
					t.Errorf("%s: starts a process other than with os/exec", where)
				}
			}
		}
	}
	if commands < 10 || specs < 4 {
		t.Errorf("found %d commands and %d container specs: the walk missed the source", commands, specs)
	}
}

type sourceFile struct {
	path string
	file *ast.File
}

// parseModule parses the module's non-test Go files, by directory.
func parseModule(root string) (map[string][]sourceFile, error) {
	fset := token.NewFileSet()
	pkgs := map[string][]sourceFile{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		pkgs[filepath.Dir(path)] = append(pkgs[filepath.Dir(path)], sourceFile{path, f})
		return nil
	})
	return pkgs, err
}

type command struct{ name string } // "" when the command is not assigned to a variable

// execCommands lists the exec.Command(Context) calls of a body, with the
// variable each is assigned to.
func execCommands(body *ast.BlockStmt) []command {
	assigned := map[*ast.CallExpr]string{}
	ast.Inspect(body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == 1 && len(as.Rhs) == 1 {
			if call, ok := as.Rhs[0].(*ast.CallExpr); ok {
				if id, ok := as.Lhs[0].(*ast.Ident); ok {
					assigned[call] = id.Name
				}
			}
		}
		return true
	})
	var cmds []command
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && isPkgCall(call, "exec", "Command", "CommandContext") {
			cmds = append(cmds, command{assigned[call]})
		}
		return true
	})
	return cmds
}

// setsEnvFrom reports whether body assigns name.Env, and every such
// assignment satisfies from.
func setsEnvFrom(body *ast.BlockStmt, name string, from func(ast.Expr) bool) bool {
	found, all := false, true
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, l := range as.Lhs {
			if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Env" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
					found = true
					all = all && from(as.Rhs[i])
				}
			}
		}
		return true
	})
	return found && all
}

// specEnvs lists the docker.Spec literals of a body (Spec within package
// docker), each by its Env value: nil for one that sets none.
func specEnvs(body *ast.BlockStmt, pkg string) []ast.Expr {
	var envs []ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || !isSpecType(lit.Type, pkg) {
			return true
		}
		var env ast.Expr
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Env" {
					env = kv.Value
				}
			}
		}
		envs = append(envs, env)
		return true
	})
	return envs
}

func isSpecType(e ast.Expr, pkg string) bool {
	switch t := e.(type) {
	case *ast.SelectorExpr:
		id, ok := t.X.(*ast.Ident)
		return ok && id.Name == "docker" && t.Sel.Name == "Spec"
	case *ast.Ident:
		return pkg == "docker" && t.Name == "Spec"
	}
	return false
}

// calls reports whether e calls what match accepts, directly or through
// the functions of its package (by name) that it calls.
func calls(e ast.Node, funcs map[string]*ast.BlockStmt, match func(*ast.CallExpr) bool) bool {
	seen := map[string]bool{}
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || found {
				return !found
			}
			if match(call) {
				found = true
				return false
			}
			var name string
			switch f := call.Fun.(type) {
			case *ast.Ident:
				name = f.Name
			case *ast.SelectorExpr:
				name = f.Sel.Name
			}
			if body, ok := funcs[name]; ok && !seen[name] {
				seen[name] = true
				found = walk(body)
			}
			return !found
		})
		return found
	}
	return walk(e)
}

// directly reports whether n calls what match accepts.
func directly(n ast.Node, match func(*ast.CallExpr) bool) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && match(call) {
			found = true
		}
		return !found
	})
	return found
}

func isPkgCall(call *ast.CallExpr, pkg string, names ...string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Name != pkg {
		return false
	}
	for _, n := range names {
		if sel.Sel.Name == n {
			return true
		}
	}
	return false
}

func isChildenvCall(call *ast.CallExpr) bool { return isPkgCall(call, "childenv", "For", "Clean") }

func isContainerBase(call *ast.CallExpr) bool {
	if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "BaseEnv" { // within package docker
		return true
	}
	return isPkgCall(call, "docker", "BaseEnv") || isPkgCall(call, "childenv", "Container")
}

func isHostEnviron(call *ast.CallExpr) bool {
	return isPkgCall(call, "os", "Environ", "Getenv", "LookupEnv") || isChildenvCall(call)
}

func isProcessStart(call *ast.CallExpr) bool {
	return isPkgCall(call, "os", "StartProcess") || isPkgCall(call, "syscall", "Exec", "ForkExec", "StartProcess") ||
		isPkgCall(call, "unix", "Exec")
}
