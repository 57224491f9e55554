package codediff

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/patchproof/patchproof/internal/confine"
)

// DefaultObjects is the selection when Options.Objects is empty: mysqlnd's
// objects in a PHP build tree.
const DefaultObjects = "ext/mysqlnd/*.o"

// Options selects what CompareDirs compares. The zero value compares
// DefaultObjects.
type Options struct {
	// Objects is a filepath.Glob pattern, relative to each side's
	// directory, for the object files to compare. When it matches nothing
	// in a directory, that directory's own *.o files are taken instead,
	// so BASE and HEAD may be build trees or directories of objects.
	Objects string
	// Limits are those of CompareConfined's child; the zero value is
	// confine's defaults.
	Limits confine.Limits
}

// CheckObjects rejects an Objects pattern that is not a glob
// (filepath.Match syntax) relative to a build: absolute, or reaching above
// it with "..".
func CheckObjects(pattern string) error {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return fmt.Errorf("not a glob: %w", err)
	}
	if filepath.IsAbs(pattern) || slices.Contains(strings.Split(filepath.ToSlash(pattern), "/"), "..") {
		return fmt.Errorf("not relative to the build directory")
	}
	return nil
}

func (o Options) objects() string {
	if o.Objects == "" {
		return DefaultObjects
	}
	return o.Objects
}

// CompareDirs compares the functions of the object files selected in
// baseDir with those selected in headDir. An error means the comparison
// could not be made — a missing directory, no objects, a file that is not an
// x86-64 ELF relocatable object — and names the file; differences are the
// Report's business.
func CompareDirs(baseDir, headDir string, opt Options) (*Report, error) {
	pattern := opt.objects()
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("codediff: objects pattern %q: %w", pattern, err)
	}
	base, err := loadSide(baseDir, pattern)
	if err != nil {
		return nil, err
	}
	head, err := loadSide(headDir, pattern)
	if err != nil {
		return nil, &headError{err}
	}
	rep := compareSides(base, head)
	rep.Objects = pattern
	rep.BaseDir, rep.HeadDir = baseDir, headDir
	return rep, nil
}

// headError is an error of reading head's objects, which the change's
// build made: CompareConfined tells it apart.
type headError struct{ err error }

func (e *headError) Error() string { return e.err.Error() }
func (e *headError) Unwrap() error { return e.err }

// side is one build's selected objects, sorted by path.
type side struct {
	objects  []*object
	warnings []string
}

func loadSide(dir, pattern string) (*side, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("codediff: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("codediff: %s: not a directory", dir)
	}
	s := &side{}
	paths, keys, fallback, err := selectObjects(dir, pattern)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("codediff: no object files in %s: neither %s nor *.o match%s", dir, pattern, linkedOut(dir, pattern))
	}
	if fallback {
		s.warnings = append(s.warnings, fmt.Sprintf("%s: nothing matches %s; compared the directory's own *.o", dir, pattern))
	}

	s.objects = make([]*object, len(paths))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range paths {
		g.Go(func() error {
			o, err := readObject(dir, paths[i], keys[i])
			if err != nil {
				return fmt.Errorf("codediff: %w", err)
			}
			s.objects[i] = o
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	sort.Slice(s.objects, func(i, j int) bool { return s.objects[i].path < s.objects[j].path })
	for _, o := range s.objects {
		for _, w := range o.warnings {
			s.warnings = append(s.warnings, o.path+": "+w)
		}
	}
	return s, nil
}

// selectObjects returns the object files to compare in dir and the key of
// each. Objects found by the fallback get the key they would have had under
// the pattern's directory, so a build tree compares with a directory of
// objects.
func selectObjects(dir, pattern string) (paths, keys []string, fallback bool, err error) {
	// The build made the directories the pattern walks: matched beneath
	// an os.Root, a directory that is a link out of the build (to a host
	// directory) is not followed, and no host file's name is listed.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, false, fmt.Errorf("codediff: %w", err)
	}
	defer root.Close()
	rels, err := fs.Glob(root.FS(), filepath.ToSlash(pattern))
	if err != nil {
		return nil, nil, false, fmt.Errorf("codediff: objects pattern %q: %w", pattern, err)
	}
	rels = regularFiles(root, rels)
	keyDir := ""
	if len(rels) == 0 {
		fallback = true
		if rels, err = fs.Glob(root.FS(), "*.o"); err != nil {
			return nil, nil, false, fmt.Errorf("codediff: %s: %w", dir, err)
		}
		rels = regularFiles(root, rels)
		if d := path.Dir(filepath.ToSlash(pattern)); d != "." && !hasMeta(d) {
			keyDir = d
		}
	}
	for _, rel := range rels {
		paths = append(paths, filepath.Join(dir, filepath.FromSlash(rel)))
		k := rel
		if keyDir != "" {
			k = path.Join(keyDir, path.Base(k))
		}
		keys = append(keys, k)
	}
	return paths, keys, fallback, nil
}

// regularFiles keeps the matches that are regular files beneath root, or
// whose kind cannot be told (the reader says why).
func regularFiles(root *os.Root, rels []string) []string {
	return slices.DeleteFunc(rels, func(rel string) bool {
		st, err := fs.Stat(root.FS(), rel)
		return err == nil && !st.Mode().IsRegular()
	})
}

// linkedOut says why a pattern may match nothing: a directory on its way
// that the build made a link, which is not followed.
func linkedOut(dir, pattern string) string {
	d := path.Dir(filepath.ToSlash(pattern))
	for ; d != "." && d != "/"; d = path.Dir(d) {
		if hasMeta(d) {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(d))); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Sprintf(" (%s is a link, not followed)", d)
		}
	}
	return ""
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// compareSides matches functions by object and name and compares each pair.
func compareSides(base, head *side) *Report {
	rep := &Report{
		BaseObjects: len(base.objects),
		HeadObjects: len(head.objects),
		Changed:     []FuncDiff{},
		Added:       []Func{},
		Removed:     []Func{},
		Warnings:    []string{},
	}
	for _, w := range base.warnings {
		rep.Warnings = append(rep.Warnings, "base: "+w)
	}
	for _, w := range head.warnings {
		rep.Warnings = append(rep.Warnings, "head: "+w)
	}
	bf, hf := funcsByKey(base), funcsByKey(head)
	for _, k := range sortedKeys(bf, hf) {
		b, h := bf[k], hf[k]
		switch {
		case h == nil:
			rep.Removed = append(rep.Removed, Func{Object: k.object, Name: k.name, Size: len(b.code)})
		case b == nil:
			rep.Added = append(rep.Added, Func{Object: k.object, Name: k.name, Size: len(h.code)})
		default:
			rep.Compared++
			if same(b, h) {
				rep.Identical++
				continue
			}
			id := k.object + ":" + k.name
			rep.Changed = append(rep.Changed, FuncDiff{
				Object:   k.object,
				Name:     k.name,
				BaseSize: len(b.code),
				HeadSize: len(h.code),
				Diff:     unified("base/"+id, "head/"+id, b.listing(), h.listing()),
			})
		}
	}
	return rep
}

type funcKey struct{ object, name string }

func funcsByKey(s *side) map[funcKey]*function {
	m := map[funcKey]*function{}
	for _, o := range s.objects {
		for _, f := range o.funcs {
			m[funcKey{o.path, f.name}] = f
		}
	}
	return m
}

func sortedKeys(a, b map[funcKey]*function) []funcKey {
	var keys []funcKey
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].object != keys[j].object {
			return keys[i].object < keys[j].object
		}
		return keys[i].name < keys[j].name
	})
	return keys
}

// same reports whether two functions are the same machine code: equal bytes
// outside reference sites, and the same references at the same places.
func same(a, b *function) bool {
	if !bytes.Equal(a.masked, b.masked) || len(a.refs) != len(b.refs) {
		return false
	}
	for i, ra := range a.refs {
		rb := b.refs[i]
		if ra.off != rb.off || ra.size != rb.size || ra.kind != rb.kind || ra.target != rb.target {
			return false
		}
	}
	return true
}
