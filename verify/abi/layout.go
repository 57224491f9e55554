package abi

import (
	"debug/dwarf"
	"fmt"
)

// maxTypeDepth bounds how deep a type is walked: C's types are a few
// levels deep (a typedef of a const pointer to a struct of an array of
// ...), and a hundred is none a compiler writes.
const maxTypeDepth = 100

// walker lays types out within maxTypeDepth, never around a cycle: a
// pointer that is its own target, a struct that holds itself, DWARF no
// compiler writes and debug/dwarf reads all the same. Where it stops, a
// type is named "?" and the type laid out has a warning that says why.
type walker struct {
	key      string              // the type being laid out
	on       map[dwarf.Type]bool // the types on the walk's way down
	warned   map[string]bool     // the types that have their warning
	warnings []string
}

func newWalker() *walker {
	return &walker{on: map[dwarf.Type]bool{}, warned: map[string]bool{}}
}

// enter goes down to t, unless t is on the way already or the way is
// maxTypeDepth long; leave goes back up.
func (w *walker) enter(t dwarf.Type) bool {
	switch {
	case w.on[t]:
		w.warn("its DWARF has a type that holds or points to itself (" + describe(t) + ")")
		return false
	case len(w.on) >= maxTypeDepth:
		w.warn(fmt.Sprintf("its DWARF has types more than %d deep", maxTypeDepth))
		return false
	}
	w.on[t] = true
	return true
}

func (w *walker) leave(t dwarf.Type) { delete(w.on, t) }

func (w *walker) warn(why string) {
	if !w.warned[w.key] {
		w.warned[w.key] = true
		w.warnings = append(w.warnings, fmt.Sprintf("%s: %s; what lies there is named ?", w.key, why))
	}
}

// describe names t for a warning, without its String, which could
// recurse as far as t does.
func describe(t dwarf.Type) string {
	name := t.Common().Name
	switch t := t.(type) {
	case *dwarf.StructType:
		name = t.StructName
	case *dwarf.EnumType:
		name = t.EnumName
	}
	if name == "" {
		return fmt.Sprintf("an anonymous %T", t)
	}
	return fmt.Sprintf("%T %s", t, name)
}

// layout is a type's Type.
func (w *walker) layout(kind, name, file string, line int, t dwarf.Type) *Type {
	w.key = kind + " " + name
	out := &Type{Kind: kind, Name: name, File: file, Line: line, Size: t.Size(), Align: w.alignOf(t)}
	under := t
	if td, ok := t.(*dwarf.TypedefType); ok {
		out.Target = w.typeName(td.Type)
		under = td.Type
		if !anonymous(under) {
			return out
		}
	}
	switch u := under.(type) {
	case *dwarf.StructType:
		if !u.Incomplete {
			out.Members = w.members(u, "", 0)
		}
	case *dwarf.EnumType:
		for _, v := range u.Val {
			out.Members = append(out.Members, Member{Name: v.Name, Value: v.Val})
		}
	}
	return out
}

// members are s's members, an anonymous aggregate's own after it.
func (w *walker) members(s *dwarf.StructType, prefix string, base int64) []Member {
	if !w.enter(s) {
		return nil
	}
	defer w.leave(s)
	var ms []Member
	for _, f := range s.Field {
		off := base + f.ByteOffset
		m := Member{Name: prefix + f.Name, Type: w.typeName(f.Type), Offset: off, Size: f.Type.Size(), Align: w.alignOf(f.Type), BitSize: f.BitSize}
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
			ms = append(ms, w.members(inner, p, off)...)
		}
	}
	return ms
}

// strip is t without its qualifiers (checkChains bounds how many).
func strip(t dwarf.Type) dwarf.Type {
	for range maxTypeDepth {
		q, ok := t.(*dwarf.QualType)
		if !ok {
			return t
		}
		t = q.Type
	}
	return t
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
func (w *walker) typeName(t dwarf.Type) string {
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
	case *dwarf.TypedefType:
		return t.Name
	}
	if !w.enter(t) {
		return "?"
	}
	defer w.leave(t)
	switch t := t.(type) {
	case *dwarf.PtrType:
		return w.typeName(t.Type) + " *"
	case *dwarf.QualType:
		return t.Qual + " " + w.typeName(t.Type)
	case *dwarf.ArrayType:
		return fmt.Sprintf("%s[%d]", w.typeName(t.Type), t.Count)
	}
	// debug/dwarf's String recurses as typeName does, a function's
	// parameters and an anonymous struct's members included.
	if !w.finite(t) {
		return "?"
	}
	return t.String()
}

// finite says whether the String of t, which the walk is on, ends:
// whether the types it names lie within maxTypeDepth, on no cycle.
func (w *walker) finite(t dwarf.Type) bool {
	var next []dwarf.Type
	switch t := t.(type) {
	case *dwarf.PtrType:
		next = []dwarf.Type{t.Type}
	case *dwarf.QualType:
		next = []dwarf.Type{t.Type}
	case *dwarf.ArrayType:
		next = []dwarf.Type{t.Type}
	case *dwarf.FuncType:
		next = append(next, t.ParamType...)
		next = append(next, t.ReturnType)
	case *dwarf.StructType:
		if t.StructName == "" && !t.Incomplete {
			for _, f := range t.Field {
				next = append(next, f.Type)
			}
		}
	}
	for _, n := range next {
		if n == nil {
			continue
		}
		if !w.enter(n) {
			return false
		}
		ok := w.finite(n)
		w.leave(n)
		if !ok {
			return false
		}
	}
	return true
}

// alignOf is the alignment t's layout implies on the ABIs PHP builds for:
// a scalar's is its size, an aggregate's its largest member's.
func (w *walker) alignOf(t dwarf.Type) int64 {
	if !w.enter(t) {
		return 1
	}
	defer w.leave(t)
	switch t := t.(type) {
	case *dwarf.TypedefType:
		return w.alignOf(t.Type)
	case *dwarf.QualType:
		return w.alignOf(t.Type)
	case *dwarf.ArrayType:
		return w.alignOf(t.Type)
	case *dwarf.StructType:
		a := int64(1)
		for _, f := range t.Field {
			a = max(a, w.alignOf(f.Type))
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
