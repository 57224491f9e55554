package abi

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/patchproof/patchproof/internal/safefs"
)

// Input is one side's build of a variant.
type Input struct {
	// Source is the source tree the build was made from: its installed
	// headers and API numbers.
	Source string
	// Debug are the ELF files whose DWARF has the layouts: a
	// ThreadSanitizer build's php and libphp.so, or a header probe's
	// object (ProbeHeaders).
	Debug []string
	// Binaries are the ELF files whose exported dynamic symbols are
	// compared: the php binary, libphp.so.
	Binaries []string
	// Roots are the directories the build compiled its files in, when not
	// Source (a build in a container sees another path); a header outside
	// them is matched by its path's last components.
	Roots []string
	// LeftOut are the installed headers Debug has no layouts of by
	// design: those a header probe could not compile. A type of theirs is
	// compared on neither side.
	LeftOut []LeftOut
}

// side is what Compare reads of an Input.
type abiSide struct {
	installed Installed
	types     map[string]*Type
	symbols   map[string]Symbol
	warnings  []string // of the types' layouts
}

func read(in Input) (*abiSide, error) {
	inst, err := InstalledHeaders(in.Source)
	if err != nil {
		return nil, err
	}
	s := &abiSide{installed: inst, types: map[string]*Type{}, symbols: map[string]Symbol{}}
	roots := append([]string{in.Source}, in.Roots...)
	for _, d := range in.Debug {
		ws, err := readTypes(d, inst, roots, s.types)
		if err != nil {
			return nil, err
		}
		s.warnings = append(s.warnings, ws...)
	}
	for _, b := range in.Binaries {
		if err := readSymbols(b, s.symbols); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Compare compares head's build of a variant with base's.
func Compare(variant string, base, head Input) (*Variant, error) {
	b, err := read(base)
	if err != nil {
		return nil, fmt.Errorf("compare %s ABI: base: %w", variant, err)
	}
	h, err := read(head)
	if err != nil {
		return nil, fmt.Errorf("compare %s ABI: head: %w", variant, &headError{err})
	}
	return compare(variant, base, head, b, h)
}

// headError is an error of reading head's build, which the change made:
// CompareConfined tells it apart.
type headError struct{ err error }

func (e *headError) Error() string { return e.err.Error() }
func (e *headError) Unwrap() error { return e.err }

// compare compares b and h, what read read of base and head.
func compare(variant string, base, head Input, b, h *abiSide) (*Variant, error) {
	v := &Variant{Name: variant, Headers: len(h.installed.List()), LeftOut: leftOut(base.LeftOut, head.LeftOut)}
	for _, w := range b.warnings {
		v.Warnings = append(v.Warnings, "base: "+w)
	}
	for _, w := range h.warnings {
		v.Warnings = append(v.Warnings, "head: "+w)
	}
	for _, l := range v.LeftOut {
		for _, types := range []map[string]*Type{b.types, h.types} {
			for k, t := range types {
				if t.File == l.Header {
					delete(types, k)
				}
			}
		}
	}
	v.Types, v.Symbols = len(h.types), len(h.symbols)
	for _, n := range apiNumbers {
		bv, _, err := readAPINumber(base.Source, n.name, n.file)
		if err != nil {
			return nil, fmt.Errorf("compare %s ABI: base: %w", variant, err)
		}
		hv, line, err := readAPINumber(head.Source, n.name, n.file)
		if err != nil {
			return nil, fmt.Errorf("compare %s ABI: head: %w", variant, err)
		}
		v.APINumbers = append(v.APINumbers, APINumber{Name: n.name, File: n.file, Line: line, Base: bv, Head: hv})
		if bv != hv {
			v.Changes = append(v.Changes, Change{Kind: APINumberChanged, Subject: n.name, Base: bv, Head: hv, File: n.file, Line: line, Break: true})
		}
	}
	v.Changes = append(v.Changes, compareTypes(b.types, h.types, head.Source)...)
	v.Changes = append(v.Changes, compareSymbols(b.symbols, h.symbols)...)
	return v, nil
}

// leftOut are the headers either side left out, each once, head's reason
// first, sorted.
func leftOut(base, head []LeftOut) []LeftOut {
	seen := map[string]bool{}
	var all []LeftOut
	for _, l := range append(append([]LeftOut(nil), head...), base...) {
		if !seen[l.Header] {
			seen[l.Header] = true
			all = append(all, l)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Header < all[j].Header })
	return all
}

func compareTypes(base, head map[string]*Type, headSrc string) []Change {
	var cs []Change
	for _, k := range sortedKeys(base, head) {
		bt, ht := base[k], head[k]
		switch {
		case bt == nil:
			cs = append(cs, Change{Kind: TypeAdded, Subject: k, Head: bytes(ht.Size), File: ht.File, Line: ht.Line})
		case ht == nil:
			if declares(headSrc, bt.File, bt.Name) {
				cs = append(cs, Change{Kind: TypeUnused, Subject: k, File: bt.File, Line: bt.Line})
				continue
			}
			cs = append(cs, Change{Kind: TypeRemoved, Subject: k, Base: bytes(bt.Size), File: bt.File, Line: bt.Line, Break: true})
		default:
			cs = append(cs, compareType(bt, ht)...)
		}
	}
	return cs
}

// declares says whether a header of the source tree src still names an
// identifier.
func declares(src, file, name string) bool {
	b, err := safefs.ReadIn(src, filepath.Join(src, file), maxSourceFile)
	return err == nil && regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).Match(b)
}

func compareType(b, h *Type) []Change {
	at := func(kind ChangeKind, member, base, head string, brk bool) Change {
		return Change{Kind: kind, Subject: h.Key(), Member: member, Base: base, Head: head, File: h.File, Line: h.Line, Break: brk}
	}
	var cs []Change
	if b.Size != h.Size {
		cs = append(cs, at(SizeChanged, "", bytes(b.Size), bytes(h.Size), true))
	}
	if b.Target != h.Target {
		compatible := b.Size == h.Size && b.Align == h.Align
		kind := TypedefRetyped
		if compatible {
			kind = LayoutCompatible
		}
		cs = append(cs, at(kind, "", b.Target, h.Target, !compatible))
	}
	enum := b.Kind == "enum" || h.Kind == "enum" || isEnum(b) || isEnum(h)
	bm, hm := byName(b.Members), byName(h.Members)
	var removed, added []Member
	for _, m := range b.Members {
		if _, ok := hm[m.Name]; !ok {
			removed = append(removed, m)
		}
	}
	for _, m := range h.Members {
		if _, ok := bm[m.Name]; !ok {
			added = append(added, m)
		}
	}
	if enum {
		for _, m := range removed {
			cs = append(cs, at(EnumeratorRemove, m.Name, fmt.Sprint(m.Value), "", true))
		}
		for _, m := range added {
			cs = append(cs, at(EnumeratorAdded, m.Name, "", fmt.Sprint(m.Value), false))
		}
		for _, m := range b.Members {
			if n, ok := hm[m.Name]; ok && n.Value != m.Value {
				cs = append(cs, at(EnumeratorValue, m.Name, fmt.Sprint(m.Value), fmt.Sprint(n.Value), true))
			}
		}
		return cs
	}
	// A member gone and one new at its place, of its type, is a rename:
	// binary compatible, but code that names it no longer compiles.
	for i := 0; i < len(removed); i++ {
		for j, a := range added {
			r := removed[i]
			if r.Offset == a.Offset && r.Type == a.Type && r.BitOffset == a.BitOffset && r.BitSize == a.BitSize {
				cs = append(cs, at(MemberRenamed, a.Name, r.Name, a.Name, true))
				removed = append(removed[:i], removed[i+1:]...)
				added = append(added[:j], added[j+1:]...)
				i--
				break
			}
		}
	}
	for _, m := range removed {
		cs = append(cs, at(MemberRemoved, m.Name, m.Type+" at "+offset(m), "", true))
	}
	for _, m := range added {
		// A union's new member that leaves its size alone moves nothing.
		brk := h.Kind != "union" || b.Size != h.Size
		cs = append(cs, at(MemberAdded, m.Name, "", m.Type+" at "+offset(m), brk))
	}
	for _, m := range b.Members {
		n, ok := hm[m.Name]
		if !ok {
			continue
		}
		if m.Type != n.Type {
			compatible := m.Size == n.Size && m.Align == n.Align
			kind := MemberRetyped
			if compatible {
				kind = LayoutCompatible
			}
			cs = append(cs, at(kind, m.Name, fmt.Sprintf("%s, %s", m.Type, bytes(m.Size)), fmt.Sprintf("%s, %s", n.Type, bytes(n.Size)), !compatible))
		}
		if m.Offset != n.Offset || m.BitOffset != n.BitOffset || m.BitSize != n.BitSize {
			cs = append(cs, at(MemberMoved, m.Name, offset(m), offset(n), true))
		}
	}
	return cs
}

// isEnum says whether t's members are enumerators: a typedef of an
// anonymous enum has them.
func isEnum(t *Type) bool {
	return t.Kind == "typedef" && len(t.Target) >= 4 && t.Target[:4] == "enum"
}

func byName(ms []Member) map[string]Member {
	m := map[string]Member{}
	for _, x := range ms {
		m[x.Name] = x
	}
	return m
}

func offset(m Member) string {
	if m.BitSize > 0 {
		return fmt.Sprintf("bit %d, %d bits", m.BitOffset, m.BitSize)
	}
	return fmt.Sprintf("offset %d", m.Offset)
}

func bytes(n int64) string {
	switch {
	case n < 0:
		// DWARF gives no size (a typedef of an _Atomic type, say).
		return "size unknown"
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

func compareSymbols(base, head map[string]Symbol) []Change {
	var cs []Change
	for _, k := range sortedKeys(base, head) {
		b, inBase := base[k]
		h, inHead := head[k]
		switch {
		case !inBase:
			cs = append(cs, Change{Kind: SymbolAdded, Subject: k, Head: h.Type})
		case !inHead:
			cs = append(cs, Change{Kind: SymbolRemoved, Subject: k, Base: b.Type, Break: true})
		case b.Type != h.Type:
			cs = append(cs, Change{Kind: SymbolChanged, Subject: k, Base: b.Type, Head: h.Type, Break: true})
		case b.Type != "func" && b.Type != "ifunc" && b.Size != h.Size:
			// A function's size follows its code; data's is its layout.
			cs = append(cs, Change{Kind: SymbolChanged, Subject: k, Base: fmt.Sprintf("%s, %d bytes", b.Type, b.Size), Head: fmt.Sprintf("%s, %d bytes", h.Type, h.Size), Break: true})
		}
	}
	return cs
}

// sortedKeys are the keys of a and b, sorted, each once.
func sortedKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	var ks []string
	for _, m := range []map[string]V{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				ks = append(ks, k)
			}
		}
	}
	sort.Strings(ks)
	return ks
}
