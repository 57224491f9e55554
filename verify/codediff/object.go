package codediff

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/patchproof/patchproof/internal/safefs"
)

// object is one relocatable object reduced to its functions, each with its
// references already named.
type object struct {
	path     string // relative to its side's directory, slash-separated
	funcs    []*function
	warnings []string
}

// function is one function symbol's code and the references its code makes.
type function struct {
	name   string
	code   []byte // as in the file
	masked []byte // code with every reference site zeroed
	insts  []inst // a linear sweep over code
	refs   []ref  // sorted by off
}

// ref is a place in a function's code that the linker (a relocation) or the
// assembler (a PC-relative operand into the same section) filled in.
type ref struct {
	off    int    // within the function
	size   int    // bytes patched
	kind   string // relocation type, or kindPCRel
	target string // what it points at, named independently of layout

	loc location // where it points, before naming
}

// kindPCRel marks a PC-relative operand the assembler resolved itself.
const kindPCRel = "pc-relative"

// location is where a reference points: a named symbol plus an offset, or an
// address in a section when the symbol is a section symbol or a label.
type location struct {
	name string // symbol name; empty for a section address
	sec  int    // section index when name is empty
	off  int64
}

// rela is one relocation entry.
type rela struct {
	off    uint64
	typ    elf.R_X86_64
	sym    uint32 // index into the symbol table; 0 for none
	addend int64
}

// objectReader holds what naming targets needs of one ELF file.
type objectReader struct {
	f        *elf.File
	syms     []elf.Symbol     // syms[i-1] is symbol index i
	relocs   map[int][]rela   // by the section they apply to, sorted by off
	named    map[int][]symRef // by section: symbols a target can be named after, sorted by value
	data     map[int][]byte
	bounds   map[int][]int64 // by section: where anonymous blocks start and end
	anon     map[location]string
	warnings []string
}

// symRef is a named symbol that covers [value, value+size).
type symRef struct {
	name  string
	value int64
	size  int64
}

// readObject parses the object at path, which lies beneath the build
// directory dir; rel is its key in the report.
func readObject(dir, path, rel string) (*object, error) {
	fail := func(err error) (*object, error) {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("truncated ELF file: %w", err)
		}
		return nil, fmt.Errorf("read object %s: %w", path, err)
	}
	// The build wrote the object and the directories on its way: no link
	// out of dir anywhere on the way, no FIFO.
	file, err := safefs.OpenIn(dir, path)
	if err != nil {
		return fail(err)
	}
	defer file.Close()
	var magic [len(elf.ELFMAG)]byte
	if _, err := io.ReadFull(file, magic[:]); err != nil || string(magic[:]) != elf.ELFMAG {
		return fail(errNotELF)
	}
	// The build wrote the object too: its headers are believed only
	// within safefs's bounds, so that no section read below takes more
	// than the file holds or decompresses a bomb.
	f, err := safefs.NewELF(file, safefs.Limits{})
	if err != nil {
		return fail(err)
	}
	o, err := parseObject(f, rel)
	if err != nil {
		return fail(err)
	}
	return o, nil
}

var errNotELF = errors.New("not an ELF file")

func parseObject(f *elf.File, rel string) (*object, error) {
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("not an x86-64 object (%v, %v)", f.Class, f.Machine)
	}
	if f.Type != elf.ET_REL {
		return nil, fmt.Errorf("not a relocatable object (%v)", f.Type)
	}
	r := &objectReader{
		f:      f,
		relocs: map[int][]rela{},
		named:  map[int][]symRef{},
		data:   map[int][]byte{},
		bounds: map[int][]int64{},
		anon:   map[location]string{},
	}
	syms, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("symbols: %w", err)
	}
	r.syms = syms
	if err := r.readRelocs(); err != nil {
		return nil, err
	}
	r.indexSymbols()

	funcs, err := r.functions()
	if err != nil {
		return nil, err
	}
	// Naming an anonymous block needs every place that points into its
	// section, so names are given only once all references are known.
	for _, fn := range funcs {
		for _, rf := range fn.refs {
			if rf.loc.name == "" {
				r.bounds[rf.loc.sec] = append(r.bounds[rf.loc.sec], rf.loc.off)
			}
		}
	}
	for sec, b := range r.bounds {
		r.bounds[sec] = sortedUnique(b)
	}
	for _, fn := range funcs {
		for i := range fn.refs {
			fn.refs[i].target = r.name(fn.refs[i].loc, 0)
		}
	}
	return &object{path: rel, funcs: funcs, warnings: r.warnings}, nil
}

func (r *objectReader) warnf(format string, a ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, a...))
}

// sectionData returns the bytes of section i, cached: within the bounds
// readObject checked every section against.
func (r *objectReader) sectionData(i int) ([]byte, error) {
	if d, ok := r.data[i]; ok {
		return d, nil
	}
	s := r.f.Sections[i]
	var d []byte
	if s.Type != elf.SHT_NOBITS {
		var err error
		if d, err = s.Data(); err != nil {
			return nil, fmt.Errorf("section %s: %w", s.Name, err)
		}
	}
	r.data[i] = d
	return d, nil
}

const relaSize = 24

func (r *objectReader) readRelocs() error {
	for _, s := range r.f.Sections {
		if s.Type != elf.SHT_RELA && s.Type != elf.SHT_REL {
			continue
		}
		to := int(s.Info)
		if to <= 0 || to >= len(r.f.Sections) {
			return fmt.Errorf("relocation section %s: applies to section %d of %d", s.Name, to, len(r.f.Sections))
		}
		if s.Type == elf.SHT_REL {
			// x86-64 objects carry addends in RELA; implicit addends
			// would have to be read from the code we compare.
			if r.f.Sections[to].Flags&elf.SHF_EXECINSTR != 0 {
				return fmt.Errorf("relocation section %s: SHT_REL is not supported on x86-64", s.Name)
			}
			continue
		}
		d, err := s.Data()
		if err != nil {
			return fmt.Errorf("relocation section %s: %w", s.Name, err)
		}
		if len(d)%relaSize != 0 {
			return fmt.Errorf("relocation section %s: size %d is not a multiple of %d", s.Name, len(d), relaSize)
		}
		rs := make([]rela, 0, len(d)/relaSize)
		for b := d; len(b) > 0; b = b[relaSize:] {
			info := binary.LittleEndian.Uint64(b[8:])
			e := rela{
				off:    binary.LittleEndian.Uint64(b),
				typ:    elf.R_X86_64(info & 0xffffffff),
				sym:    uint32(info >> 32),
				addend: int64(binary.LittleEndian.Uint64(b[16:])),
			}
			if int(e.sym) > len(r.syms) {
				return fmt.Errorf("relocation section %s: symbol %d of %d", s.Name, e.sym, len(r.syms))
			}
			rs = append(rs, e)
		}
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].off < rs[j].off })
		r.relocs[to] = append(r.relocs[to], rs...)
	}
	return nil
}

// definedIn returns the section index a symbol is defined in, or -1.
func (r *objectReader) definedIn(s elf.Symbol) int {
	if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE || int(s.Section) >= len(r.f.Sections) {
		return -1
	}
	return int(s.Section)
}

// isLabel reports whether a symbol stands for an address rather than for a
// thing with a name of its own: a section symbol, or an assembler label such
// as .LC0 that gas kept because it points into a mergeable section.
func isLabel(s elf.Symbol) bool {
	switch elf.ST_TYPE(s.Info) {
	case elf.STT_SECTION:
		return true
	case elf.STT_NOTYPE:
		return elf.ST_BIND(s.Info) == elf.STB_LOCAL
	}
	return false
}

func isFunc(s elf.Symbol) bool {
	t := elf.ST_TYPE(s.Info)
	return t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC
}

func (r *objectReader) indexSymbols() {
	for _, s := range r.syms {
		sec := r.definedIn(s)
		if sec < 0 || isLabel(s) || elf.ST_TYPE(s.Info) == elf.STT_FILE || s.Name == "" {
			continue
		}
		r.named[sec] = append(r.named[sec], symRef{name: s.Name, value: int64(s.Value), size: int64(s.Size)})
		r.bounds[sec] = append(r.bounds[sec], int64(s.Value), int64(s.Value+s.Size))
	}
	for sec, ns := range r.named {
		// Aliases cover the same bytes; the smallest name wins so the
		// choice does not depend on symbol table order.
		sort.Slice(ns, func(i, j int) bool {
			if ns[i].value != ns[j].value {
				return ns[i].value < ns[j].value
			}
			return ns[i].name < ns[j].name
		})
		r.named[sec] = ns
	}
	for i, s := range r.f.Sections {
		r.bounds[i] = append(r.bounds[i], 0, int64(s.Size))
	}
}

// maxFunction bounds the code of one function, which decoding takes up
// to 90 times over in memory (an x86asm.Inst for every 2-byte
// instruction): no function of PHP's, the VM's execute_ex included, comes
// near it.
const maxFunction = 16 << 20

// functions extracts every function symbol with its code and references.
func (r *objectReader) functions() ([]*function, error) {
	var funcs []*function
	seen := map[string]int{}
	for _, s := range r.syms {
		sec := r.definedIn(s)
		if !isFunc(s) || sec < 0 {
			continue
		}
		hdr := r.f.Sections[sec]
		if hdr.Type != elf.SHT_PROGBITS {
			r.warnf("function %s is in %s section %s; skipped", s.Name, hdr.Type, hdr.Name)
			continue
		}
		data, err := r.sectionData(sec)
		if err != nil {
			return nil, err
		}
		start, size := s.Value, s.Size
		if size == 0 {
			size = r.extent(sec, start)
			r.warnf("function %s has no size; took %d bytes up to the next symbol", s.Name, size)
		}
		if size > maxFunction {
			return nil, fmt.Errorf("function %s: %d bytes: %w (%d bytes)", s.Name, size, safefs.ErrTooLarge, maxFunction)
		}
		if start > uint64(len(data)) || size > uint64(len(data))-start {
			return nil, fmt.Errorf("function %s: bytes %#x+%#x lie outside section %s (%#x bytes)", s.Name, start, size, hdr.Name, len(data))
		}
		name := s.Name
		if n := seen[s.Name]; n > 0 {
			name = fmt.Sprintf("%s#%d", s.Name, n+1)
			r.warnf("function %s is defined %d times; this one is compared as %s", s.Name, n+1, name)
		}
		seen[s.Name]++
		fn, err := r.function(name, sec, int64(start), data[start:start+size])
		if err != nil {
			return nil, err
		}
		funcs = append(funcs, fn)
	}
	return funcs, nil
}

// extent returns the bytes from start to the next symbol in the section or
// to the section's end.
func (r *objectReader) extent(sec int, start uint64) uint64 {
	end := r.f.Sections[sec].Size
	for _, n := range r.named[sec] {
		if v := uint64(n.value); v > start && v < end {
			end = v
		}
	}
	return end - start
}

// function decodes one function and collects its references: the
// relocations inside it and the PC-relative operands that leave it without a
// relocation.
func (r *objectReader) function(name string, sec int, start int64, code []byte) (*function, error) {
	fn := &function{name: name, code: code, insts: decode(code)}
	end := start + int64(len(code))
	relocs := r.relocs[sec]
	i := sort.Search(len(relocs), func(i int) bool { return int64(relocs[i].off) >= start })
	covered := make([]bool, len(code)) // bytes a relocation patches
	for ; i < len(relocs) && int64(relocs[i].off) < end; i++ {
		e := relocs[i]
		off := int(int64(e.off) - start)
		size := relocSize(e.typ)
		if off+size > len(code) {
			return nil, fmt.Errorf("function %s: relocation %v at %#x runs past its end", name, e.typ, e.off)
		}
		for k := off; k < off+size; k++ {
			covered[k] = true
		}
		bias := int64(0)
		if pcRelative(e.typ) {
			bias = int64(size)
			if in, ok := fn.instAt(off); ok {
				bias = int64(in.off + in.len - off)
			}
		}
		fn.refs = append(fn.refs, ref{off: off, size: size, kind: e.typ.String(), loc: r.locate(e, bias)})
	}
	for _, in := range fn.insts {
		if in.bad || in.PCRel == 0 {
			continue
		}
		field := in.off + in.PCRelOff
		if field+in.PCRel > len(code) || covered[field] {
			continue
		}
		dest := int64(in.off+in.len) + in.pcDisp()
		if dest >= 0 && dest < int64(len(code)) {
			continue // a branch within the function: the bytes say it all
		}
		fn.refs = append(fn.refs, ref{off: field, size: in.PCRel, kind: kindPCRel, loc: location{sec: sec, off: start + dest}})
	}
	sort.SliceStable(fn.refs, func(i, j int) bool { return fn.refs[i].off < fn.refs[j].off })
	fn.masked = bytes.Clone(code)
	for _, rf := range fn.refs {
		clear(fn.masked[rf.off : rf.off+rf.size])
	}
	return fn, nil
}

// locate returns where a relocation points. bias is what the addend leaves
// out: for a PC-relative field, the distance from the field to the address
// the CPU adds the value to.
func (r *objectReader) locate(e rela, bias int64) location {
	if e.sym == 0 {
		return location{name: "*ABS*", off: e.addend + bias}
	}
	s := r.syms[e.sym-1]
	if d := r.definedIn(s); d >= 0 && isLabel(s) {
		return location{sec: d, off: int64(s.Value) + e.addend + bias}
	}
	return location{name: s.Name, off: e.addend + bias}
}

// relocSize returns how many bytes a relocation of type t patches.
func relocSize(t elf.R_X86_64) int {
	switch t {
	case elf.R_X86_64_NONE, elf.R_X86_64_TLSDESC_CALL:
		return 0
	case elf.R_X86_64_8, elf.R_X86_64_PC8:
		return 1
	case elf.R_X86_64_16, elf.R_X86_64_PC16:
		return 2
	case elf.R_X86_64_64, elf.R_X86_64_PC64, elf.R_X86_64_GOT64, elf.R_X86_64_GOTPCREL64,
		elf.R_X86_64_GOTPC64, elf.R_X86_64_GOTPLT64, elf.R_X86_64_PLTOFF64, elf.R_X86_64_GOTOFF64,
		elf.R_X86_64_DTPMOD64, elf.R_X86_64_DTPOFF64, elf.R_X86_64_TPOFF64, elf.R_X86_64_SIZE64,
		elf.R_X86_64_RELATIVE64:
		return 8
	}
	return 4
}

// pcRelative reports whether a relocation's value is relative to the
// address of the field it patches.
func pcRelative(t elf.R_X86_64) bool {
	switch t {
	case elf.R_X86_64_PC8, elf.R_X86_64_PC16, elf.R_X86_64_PC32, elf.R_X86_64_PC64,
		elf.R_X86_64_PLT32, elf.R_X86_64_GOTPCREL, elf.R_X86_64_GOTPCRELX, elf.R_X86_64_REX_GOTPCRELX,
		elf.R_X86_64_GOTPC32, elf.R_X86_64_GOTPCREL64, elf.R_X86_64_GOTPC64,
		elf.R_X86_64_TLSGD, elf.R_X86_64_TLSLD, elf.R_X86_64_GOTTPOFF, elf.R_X86_64_GOTPC32_TLSDESC:
		return true
	}
	return false
}

func sortedUnique(v []int64) []int64 {
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}
