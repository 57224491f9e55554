package abi

import (
	"fmt"
	"github.com/patchproof/patchproof/internal/safefs"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Installed is the set of headers `make install-headers` installs, as
// paths relative to the source tree: files, and directories whose own *.h
// are installed (not their subdirectories', as the rule copies `*.h`).
type Installed struct {
	Files map[string]bool `json:"-"`
	Dirs  map[string]bool `json:"-"`
}

// Has says whether rel, a path relative to the source tree, is installed.
func (in Installed) Has(rel string) bool {
	rel = path.Clean(filepath.ToSlash(rel))
	if in.Files[rel] {
		return true
	}
	return strings.HasSuffix(rel, ".h") && in.Dirs[path.Dir(rel)]
}

// List is the set's entries, directories with a trailing slash, sorted.
func (in Installed) List() []string {
	var l []string
	for f := range in.Files {
		l = append(l, f)
	}
	for d := range in.Dirs {
		l = append(l, d+"/")
	}
	sort.Strings(l)
	return l
}

// InstalledHeaders reads the headers a source tree installs from every
// PHP_INSTALL_HEADERS call in its configure.ac and config*.m4 files (the
// core's Zend/, TSRM/, include/, main/ come from configure.ac's). An
// argument that names a shell variable ($GD_HEADER_DIRS) is configure's
// choice at build time and is left out.
func InstalledHeaders(src string) (Installed, error) {
	in := Installed{Files: map[string]bool{}, Dirs: map[string]bool{}}
	var scripts []string
	if _, err := os.Stat(filepath.Join(src, "configure.ac")); err == nil {
		scripts = append(scripts, filepath.Join(src, "configure.ac"))
	}
	for _, dir := range []string{"ext", "sapi", "Zend", "TSRM", "main"} {
		root := filepath.Join(src, dir)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == root && os.IsNotExist(err) {
					return filepath.SkipDir
				}
				return err
			}
			if !d.IsDir() && strings.HasPrefix(d.Name(), "config") && strings.HasSuffix(d.Name(), ".m4") {
				scripts = append(scripts, p)
			}
			return nil
		})
		if err != nil {
			return in, fmt.Errorf("read installed headers of %s: %w", src, err)
		}
	}
	if len(scripts) == 0 {
		return in, fmt.Errorf("read installed headers of %s: no configure.ac or config*.m4 in it", src)
	}
	for _, s := range scripts {
		b, err := safefs.ReadIn(src, s, maxSourceFile)
		if err != nil {
			return in, fmt.Errorf("read installed headers: %w", err)
		}
		for _, p := range installHeaders(string(b)) {
			if strings.HasSuffix(p, "/") {
				in.Dirs[path.Clean(p)] = true
			} else {
				in.Files[path.Clean(p)] = true
			}
		}
	}
	return in, nil
}

// installHeaders are the paths the PHP_INSTALL_HEADERS calls in an m4
// script name, a directory with its trailing slash. As the macro does,
// a call with a file list joins each file to the first argument.
func installHeaders(script string) []string {
	const macro = "PHP_INSTALL_HEADERS("
	var paths []string
	for {
		i := strings.Index(script, macro)
		if i < 0 {
			return paths
		}
		comment := strings.HasPrefix(strings.TrimSpace(script[strings.LastIndexByte(script[:i], '\n')+1:i]), "dnl")
		script = script[i+len(macro):]
		if comment {
			// dnl names the macro in its own documentation.
			continue
		}
		args, rest := macroArgs(script)
		script = rest
		if len(args) == 0 {
			continue
		}
		words := func(a string) []string {
			var ws []string
			for _, w := range strings.Fields(a) {
				if !strings.Contains(w, "$") {
					ws = append(ws, w)
				}
			}
			return ws
		}
		if len(args) == 1 || strings.TrimSpace(args[1]) == "" {
			paths = append(paths, words(args[0])...)
			continue
		}
		base := words(args[0])
		if len(base) != 1 {
			continue
		}
		for _, f := range words(args[1]) {
			p := path.Clean(base[0] + "/" + f)
			if strings.HasSuffix(f, "/") {
				p += "/"
			}
			paths = append(paths, p)
		}
	}
}

// macroArgs splits an m4 call's arguments, after its opening parenthesis,
// at top-level commas, dropping m4's quotes and line continuations, and
// returns what follows the closing parenthesis.
func macroArgs(s string) ([]string, string) {
	var args []string
	var cur strings.Builder
	depth, quote := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '[':
			quote++
			continue
		case c == ']':
			quote--
			continue
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i++
			cur.WriteByte(' ')
			continue
		case quote > 0:
		case c == '(':
			depth++
		case c == ')' && depth == 0:
			return append(args, cur.String()), s[i+1:]
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			args = append(args, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	return nil, ""
}

// maxSourceFile bounds a header or build file read from a tree under
// test: php-src's largest is well under 1 MiB.
const maxSourceFile = 16 << 20
