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
// of an ELF file. A file path in DWARF is where the build compiled it:
// it is made relative to the first of roots that holds it, or else
// matched by its trailing components against the installed headers.
func readTypes(file string, in Installed, roots []string, into map[string]*Type) error {
	f, err := safefs.OpenELF(file)
	if err != nil {
		return fmt.Errorf("read types of %s: %w", file, err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		return fmt.Errorf("read types of %s: %w (was it built with -g?)", file, err)
	}
	r := d.Reader()
	var files []*dwarf.LineFile
	var compDir string
	rel := map[string]string{} // DWARF path → installed header, "" if none
	for {
		e, err := r.Next()
		if err != nil {
			return fmt.Errorf("read types of %s: %w", file, err)
		}
		if e == nil {
			return nil
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			files = nil
			compDir, _ = e.Val(dwarf.AttrCompDir).(string)
			if lr, err := d.LineReader(e); err == nil && lr != nil {
				files = lr.Files()
			}
			continue
		}
		if e.Tag == 0 {
			continue
		}
		if e.Children {
			r.SkipChildren()
		}
		kind, ok := kinds[e.Tag]
		if !ok {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if name == "" {
			continue // an anonymous aggregate is its typedef's
		}
		if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); decl {
			continue
		}
		key := kind + " " + name
		if _, seen := into[key]; seen {
			continue
		}
		fi, ok := e.Val(dwarf.AttrDeclFile).(int64)
		if !ok || fi < 0 || int(fi) >= len(files) || files[fi] == nil {
			continue
		}
		p := files[fi].Name
		if !filepath.IsAbs(p) && compDir != "" {
			// DWARF 5 names a file relative to its include directory,
			// itself relative to the unit's compilation directory.
			p = filepath.Join(compDir, p)
		}
		h, done := rel[p]
		if !done {
			h = installedPath(p, in, roots)
			rel[p] = h
		}
		if h == "" {
			continue
		}
		typ, err := d.Type(e.Offset)
		if err != nil {
			return fmt.Errorf("read type %s of %s: %w", key, file, err)
		}
		line, _ := e.Val(dwarf.AttrDeclLine).(int64)
		into[key] = layout(kind, name, h, int(line), typ)
	}
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

// layout is a type's Type.
func layout(kind, name, file string, line int, t dwarf.Type) *Type {
	out := &Type{Kind: kind, Name: name, File: file, Line: line, Size: t.Size(), Align: alignOf(t)}
	under := t
	if td, ok := t.(*dwarf.TypedefType); ok {
		out.Target = typeName(td.Type)
		under = td.Type
		if !anonymous(under) {
			return out
		}
	}
	switch u := under.(type) {
	case *dwarf.StructType:
		if !u.Incomplete {
			out.Members = members(u, "", 0)
		}
	case *dwarf.EnumType:
		for _, v := range u.Val {
			out.Members = append(out.Members, Member{Name: v.Name, Value: v.Val})
		}
	}
	return out
}

// members are s's members, an anonymous aggregate's own after it.
func members(s *dwarf.StructType, prefix string, base int64) []Member {
	var ms []Member
	for _, f := range s.Field {
		off := base + f.ByteOffset
		m := Member{Name: prefix + f.Name, Type: typeName(f.Type), Offset: off, Size: f.Type.Size(), Align: alignOf(f.Type), BitSize: f.BitSize}
		if f.BitSize > 0 {
			m.BitOffset = base*8 + f.DataBitOffset
			if f.DataBitOffset == 0 && f.BitOffset != 0 {
				m.BitOffset = off*8 + f.ByteSize*8 - f.BitOffset - f.BitSize
			}
		}
		if f.Name != "" {
			ms = append(ms, m)
		}
		if inner, ok := strip(f.Type).(*dwarf.StructType); ok && inner.StructName == "" && !inner.Incomplete {
			p := prefix
			if f.Name != "" {
				p += f.Name + "."
			}
			ms = append(ms, members(inner, p, off)...)
		}
	}
	return ms
}

// strip is t without its qualifiers.
func strip(t dwarf.Type) dwarf.Type {
	for {
		q, ok := t.(*dwarf.QualType)
		if !ok {
			return t
		}
		t = q.Type
	}
}

func anonymous(t dwarf.Type) bool {
	switch t := strip(t).(type) {
	case *dwarf.StructType:
		return t.StructName == ""
	case *dwarf.EnumType:
		return t.EnumName == ""
	}
	return false
}

// typeName is t as a declaration would name it, an anonymous aggregate as
// its kind and {…}: its members are compared on their own.
func typeName(t dwarf.Type) string {
	switch t := t.(type) {
	case *dwarf.StructType:
		if t.StructName == "" {
			return t.Kind + " {…}"
		}
		return t.Kind + " " + t.StructName
	case *dwarf.EnumType:
		if t.EnumName == "" {
			return "enum {…}"
		}
		return "enum " + t.EnumName
	case *dwarf.PtrType:
		return typeName(t.Type) + " *"
	case *dwarf.QualType:
		return t.Qual + " " + typeName(t.Type)
	case *dwarf.ArrayType:
		return fmt.Sprintf("%s[%d]", typeName(t.Type), t.Count)
	case *dwarf.TypedefType:
		return t.Name
	}
	return t.String()
}

// alignOf is the alignment t's layout implies on the ABIs PHP builds for:
// a scalar's is its size, an aggregate's its largest member's.
func alignOf(t dwarf.Type) int64 {
	switch t := t.(type) {
	case *dwarf.TypedefType:
		return alignOf(t.Type)
	case *dwarf.QualType:
		return alignOf(t.Type)
	case *dwarf.ArrayType:
		return alignOf(t.Type)
	case *dwarf.StructType:
		a := int64(1)
		for _, f := range t.Field {
			a = max(a, alignOf(f.Type))
		}
		return a
	}
	s := t.Size()
	switch {
	case s <= 0:
		return 1
	case s >= 16:
		return 16
	}
	a := int64(1)
	for a*2 <= s {
		a *= 2
	}
	return a
}
