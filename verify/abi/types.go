package abi

import (
	"debug/dwarf"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchproof/patchproof/internal/safefs"
)

// A Type is the layout of one struct, union, enum or typedef of an
// installed header, as a build's DWARF has it.
type Type struct {
	Kind string // struct, union, enum, typedef
	Name string
	File string // the header, relative to the source tree
	Line int
	Size int64
	// Align is the alignment its members' types imply (DWARF records
	// it only when the source asks for one).
	Align int64
	// Members are a struct's or union's members, an anonymous
	// aggregate's members after it with its name and a dot, or an enum's
	// enumerators; a typedef of an anonymous type has its target's.
	Members []Member
	// Target is the type a typedef names.
	Target string
}

// Key names the type as C does: "struct st_mysqlnd_stats", "typedef
// MYSQLND_STATS".
func (t *Type) Key() string { return t.Kind + " " + t.Name }

// A Member is a member of a struct or union, or an enumerator.
type Member struct {
	Name      string
	Type      string
	Offset    int64
	Size      int64
	Align     int64
	BitOffset int64 // of a bit field, from the start of the aggregate
	BitSize   int64
	Value     int64 // an enumerator's
}

// readTypes reads the types declared in installed headers from the DWARF
// of an ELF file, those into lacks, into into, and returns the warnings
// of their layouts. A file path in DWARF is where the build compiled it:
// it is made relative to the first of roots that holds it, or else
// matched by its trailing components against the installed headers.
//
// The build made the file: its sections are read within safefs's bounds
// (OpenELF), and its type graph is checked (checkChains) before
// debug/dwarf follows it, which recurses without end on a typedef that is
// its own type.
func readTypes(file string, in Installed, roots []string, into map[string]*Type) ([]string, error) {
	f, err := safefs.OpenELF(file)
	if err != nil {
		return nil, fmt.Errorf("read types of %s: %w", file, err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		return nil, fmt.Errorf("read types of %s: %w (was it built with -g?)", file, err)
	}
	found, chains, err := scanTypes(d, in, roots, into)
	if err != nil {
		return nil, fmt.Errorf("read types of %s: %w", file, err)
	}
	if err := checkChains(chains); err != nil {
		return nil, fmt.Errorf("read types of %s: %w", file, err)
	}
	w := newWalker()
	for _, c := range found {
		typ, err := d.Type(c.off)
		if err != nil {
			return nil, fmt.Errorf("read type %s of %s: %w", c.key, file, err)
		}
		into[c.key] = w.layout(c.kind, c.name, c.header, c.line, typ)
	}
	return w.warnings, nil
}

// declared is a type of an installed header that a DWARF declares.
type declared struct {
	key, kind, name, header string
	line                    int
	off                     dwarf.Offset
}

// scanTypes lists the types of installed headers that d declares and into
// lacks, each once, and the DW_AT_type of every typedef, qualifier and
// array of d (whatever its place in the tree): the references that
// debug/dwarf's Size follows.
func scanTypes(d *dwarf.Data, in Installed, roots []string, into map[string]*Type) ([]declared, map[dwarf.Offset]dwarf.Offset, error) {
	s := &scanner{d: d, in: in, roots: roots, into: into, seen: map[string]bool{}, rel: map[string]string{}}
	r := d.Reader()
	var found []declared
	chains := map[dwarf.Offset]dwarf.Offset{}
	depth := 0 // of the next entry: 1 for what a unit holds
	for {
		e, err := r.Next()
		if err != nil {
			return nil, nil, err
		}
		if e == nil {
			return found, chains, nil
		}
		level := depth
		switch {
		case e.Tag == 0:
			depth--
			continue
		case e.Children:
			depth++
		}
		if chainTags[e.Tag] {
			if to, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok {
				chains[e.Offset] = to
			}
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			depth = 1
			s.unit(e)
			continue
		}
		// A unit's own types: not those of a function's body.
		if level != 1 {
			continue
		}
		if t, ok := s.declared(e); ok {
			found = append(found, t)
		}
	}
}

// scanner is what scanTypes knows of the unit it is in.
type scanner struct {
	d     *dwarf.Data
	in    Installed
	roots []string
	into  map[string]*Type
	seen  map[string]bool // the keys found

	files   []*dwarf.LineFile
	compDir string
	rel     map[string]string // DWARF path → installed header, "" if none
}

// unit starts the unit of entry e.
func (s *scanner) unit(e *dwarf.Entry) {
	s.files = nil
	s.compDir, _ = e.Val(dwarf.AttrCompDir).(string)
	if lr, err := s.d.LineReader(e); err == nil && lr != nil {
		s.files = lr.Files()
	}
}

// declared is the type entry e declares, where it is one of an installed
// header that scanTypes has not found yet.
func (s *scanner) declared(e *dwarf.Entry) (declared, bool) {
	kind, ok := kinds[e.Tag]
	if !ok {
		return declared{}, false
	}
	name, _ := e.Val(dwarf.AttrName).(string)
	if name == "" {
		return declared{}, false // an anonymous aggregate is its typedef's
	}
	if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); decl {
		return declared{}, false
	}
	key := kind + " " + name
	if _, done := s.into[key]; done || s.seen[key] {
		return declared{}, false
	}
	fi, ok := e.Val(dwarf.AttrDeclFile).(int64)
	if !ok || fi < 0 || int(fi) >= len(s.files) || s.files[fi] == nil {
		return declared{}, false
	}
	p := s.files[fi].Name
	if !filepath.IsAbs(p) && s.compDir != "" {
		// DWARF 5 names a file relative to its include directory,
		// itself relative to the unit's compilation directory.
		p = filepath.Join(s.compDir, p)
	}
	h, done := s.rel[p]
	if !done {
		h = installedPath(p, s.in, s.roots)
		s.rel[p] = h
	}
	if h == "" {
		return declared{}, false
	}
	s.seen[key] = true
	line, _ := e.Val(dwarf.AttrDeclLine).(int64)
	return declared{key: key, kind: kind, name: name, header: h, line: int(line), off: e.Offset}, true
}

var kinds = map[dwarf.Tag]string{
	dwarf.TagStructType:      "struct",
	dwarf.TagUnionType:       "union",
	dwarf.TagEnumerationType: "enum",
	dwarf.TagTypedef:         "typedef",
}

// installedPath is the installed header a DWARF file path is, relative to
// the source tree, or "".
func installedPath(p string, in Installed, roots []string) string {
	p = filepath.ToSlash(filepath.Clean(p))
	for _, root := range roots {
		root = filepath.ToSlash(filepath.Clean(root))
		if rel, ok := strings.CutPrefix(p, root+"/"); ok {
			if in.Has(rel) {
				return rel
			}
			return ""
		}
	}
	// A path outside the roots is one the build compiled elsewhere (its
	// temporary directory, renamed since): it is an installed header when
	// its last components are one and a root has that file. A system
	// header (/usr/lib/gcc/…/include/stdatomic.h) ends as an installed
	// directory's file would (include/), but no root has it.
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts)-1; i++ {
		if rel := path.Join(parts[i:]...); in.Has(rel) && inRoots(rel, roots) {
			return rel
		}
	}
	return ""
}

// inRoots says whether a file rel lies in one of roots.
func inRoots(rel string, roots []string) bool {
	for _, root := range roots {
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}
