package safefs

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
)

// Limits bound what a reader loads of an ELF file that code under test
// made (an object, php, libphp.so): debug/elf believes the sizes the
// file's headers claim, allocating and decompressing as much, so a
// header that claims gigabytes of a sparse file, or a few KiB of zlib
// that decompress to gigabytes, would take patchproof's memory. The zero
// value is the defaults; each field's default says why it is what it is.
type Limits struct {
	// Section is the largest section, uncompressed: DefaultSection.
	Section int64
	// Total is all sections together, uncompressed: DefaultTotal.
	Total int64
	// Ratio is the most a compressed section larger than RatioFloor may
	// grow when decompressed, uncompressed to compressed: DefaultRatio.
	Ratio int64
	// SymbolTable is the largest symbol table (each 24-byte entry becomes
	// a ~90-byte elf.Symbol): DefaultSymbolTable.
	SymbolTable int64
	// Sections is the most section headers: DefaultSections.
	Sections int64
}

const (
	// DefaultSection is 256 MiB: php-src's largest object's .text is a few
	// MiB, and the .debug_info of a -g libphp.so some tens of MiB.
	DefaultSection = 256 << 20
	// DefaultTotal is 1 GiB: a real file's sections add up to its size
	// (plus what compressed ones gain), and php with libphp.so built -g
	// are well under it; overlapping sections could add up to much more.
	DefaultTotal = 1 << 30
	// DefaultRatio is 64: DWARF compresses 3 to 10 times with zlib (gcc
	// -gz) or zstd, its strings some 20; zlib can reach 1000 and zstd far
	// more, which only a bomb does.
	DefaultRatio = 64
	// RatioFloor is 1 MiB, below which a compressed section may grow any
	// ratio: a tiny one may compress oddly, and costs nothing.
	RatioFloor = 1 << 20
	// DefaultSymbolTable is 16 MiB, some 700,000 symbols: php exports
	// some 10,000, and libphp.so's .symtab holds a few tens of thousands.
	DefaultSymbolTable = 16 << 20
	// DefaultSections is 262,144: an object of -ffunction-sections has a
	// few per function, php-src's largest some tens of thousands.
	DefaultSections = 1 << 18
)

// withDefaults is l with each zero field at its default: the one place
// the defaults are applied.
func (l Limits) withDefaults() Limits {
	set := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&l.Section, DefaultSection)
	set(&l.Total, DefaultTotal)
	set(&l.Ratio, DefaultRatio)
	set(&l.SymbolTable, DefaultSymbolTable)
	set(&l.Sections, DefaultSections)
	return l
}

// ELF is an ELF file opened by OpenELF; Close closes the file beneath.
type ELF struct {
	*elf.File
	f *os.File
}

// Close closes the file.
func (e *ELF) Close() error { return e.f.Close() }

// OpenELF is elf.Open of a path the tree's code could have made a link
// (an object or binary of a build): opened as OpenPath opens, never
// through a link, and read as NewELF reads, within the default Limits.
func OpenELF(path string) (*ELF, error) {
	f, err := OpenPath(path)
	if err != nil {
		return nil, err
	}
	ef, err := NewELF(f, Limits{})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &ELF{File: ef, f: f}, nil
}

// NewELF is elf.NewFile of f within lim: the headers elf.NewFile reads
// whole (the section header table, the section names) are checked
// before it reads them, and every section after (CheckELF), so that
// reading any section's Data, DWARF included, stays within lim. A file
// beyond lim is an error wrapping ErrTooLarge. The caller closes f.
func NewELF(f *os.File, lim Limits) (*elf.File, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	lim = lim.withDefaults()
	if err := preflight(f, fi.Size(), lim); err != nil {
		return nil, err
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, err
	}
	if err := CheckELF(ef, fi.Size(), lim); err != nil {
		return nil, err
	}
	return ef, nil
}

// CheckELF checks every section of f, a file of size bytes, against lim
// without reading more than a compression header: each lies within the
// file, none is larger than lim.Section once decompressed nor grows more
// than lim.Ratio times, a symbol table is at most lim.SymbolTable, and
// all together are at most lim.Total. Call it before any Data, Open,
// Symbols or DWARF of a file code under test made: DWARF reads and
// decompresses every debug section whole. A section beyond lim is an
// error wrapping ErrTooLarge.
func CheckELF(f *elf.File, size int64, lim Limits) error {
	lim = lim.withDefaults()
	if n := int64(len(f.Sections)); n > lim.Sections {
		return fmt.Errorf("%d sections: %w (%d)", n, ErrTooLarge, lim.Sections)
	}
	var total int64
	for _, s := range f.Sections {
		n, err := checkSection(s, size, lim)
		if err != nil {
			return fmt.Errorf("section %s: %w", s.Name, err)
		}
		if total += n; total > lim.Total {
			return fmt.Errorf("sections up to %s: %d bytes in all: %w (%d bytes)", s.Name, total, ErrTooLarge, lim.Total)
		}
	}
	return nil
}

// checkSection checks one section and returns the bytes its Data would
// take.
func checkSection(s *elf.Section, size int64, lim Limits) (int64, error) {
	if s.Type == elf.SHT_NOBITS {
		return 0, nil
	}
	if err := within(s.Offset, s.FileSize, size); err != nil {
		return 0, err
	}
	n := s.Size
	switch {
	case s.Flags&elf.SHF_COMPRESSED != 0:
		// elf.NewFile read the compression header: Size is what it
		// claims the section decompresses to.
	case strings.HasPrefix(s.Name, ".zdebug"):
		// GNU's older compressed sections: "ZLIB" and the size, big
		// endian, which Open believes.
		var h [12]byte
		if _, err := s.ReadAt(h[:], 0); err != nil || string(h[:4]) != "ZLIB" {
			break
		}
		n = binary.BigEndian.Uint64(h[4:])
	}
	if n > uint64(lim.Section) {
		return 0, fmt.Errorf("%d bytes: %w (%d bytes)", n, ErrTooLarge, lim.Section)
	}
	if n > s.FileSize && n > RatioFloor && n/uint64(lim.Ratio) > s.FileSize {
		return 0, fmt.Errorf("%d compressed bytes claim %d: %w (%d times)", s.FileSize, n, ErrTooLarge, lim.Ratio)
	}
	if (s.Type == elf.SHT_SYMTAB || s.Type == elf.SHT_DYNSYM) && n > uint64(lim.SymbolTable) {
		return 0, fmt.Errorf("symbol table of %d bytes: %w (%d bytes)", n, ErrTooLarge, lim.SymbolTable)
	}
	return int64(n), nil
}

// within checks that n bytes at off lie in a file of size bytes.
func within(off, n uint64, size int64) error {
	if n > uint64(size) || off > uint64(size)-n {
		return fmt.Errorf("%d bytes at %#x, past the end of the file (%d bytes): %w", n, off, size, ErrTooLarge)
	}
	return nil
}

// headers is what an ELF file's header says of its header tables.
type headers struct {
	bo                                binary.ByteOrder
	class                             elf.Class
	phoff, phentsize, phnum           uint64
	shoff, shentsize, shnum, shstrndx uint64
}

// preflight checks what elf.NewFile reads whole of a file of size bytes,
// whatever size its header claims: the program and section header
// tables, and the section name string table. A file it cannot make out
// passes: elf.NewFile says what is wrong with it.
func preflight(r io.ReaderAt, size int64, lim Limits) error {
	h, ok := readHeaders(r)
	if !ok {
		return nil
	}
	if err := table("program headers", h.phoff, h.phnum, h.phentsize, size, lim); err != nil {
		return err
	}
	if h.shoff == 0 {
		return nil
	}
	if h.shnum == 0 || h.shstrndx == uint64(elf.SHN_XINDEX) {
		// Past 0xff00 sections, the counts are in section 0's header.
		if err := table("section headers", h.shoff, 1, h.shentsize, size, lim); err != nil {
			return err
		}
		s0, err := h.section(r, 0)
		if err != nil {
			return nil
		}
		if h.shnum == 0 {
			h.shnum = s0.Size
		}
		if h.shstrndx == uint64(elf.SHN_XINDEX) {
			h.shstrndx = uint64(s0.Link)
		}
	}
	if h.shnum > uint64(lim.Sections) {
		return fmt.Errorf("%d sections: %w (%d)", h.shnum, ErrTooLarge, lim.Sections)
	}
	if err := table("section headers", h.shoff, h.shnum, h.shentsize, size, lim); err != nil {
		return err
	}
	if h.shstrndx == 0 || h.shstrndx >= h.shnum {
		return nil
	}
	s, err := h.section(r, h.shstrndx)
	if err != nil {
		return nil
	}
	if elf.SectionFlag(s.Flags)&elf.SHF_COMPRESSED != 0 {
		// No linker compresses it, and elf.NewFile would decompress it
		// before CheckELF could look at its compression header.
		return fmt.Errorf("section names: compressed: %w", ErrTooLarge)
	}
	if s.Size > uint64(lim.Section) {
		return fmt.Errorf("section names: %d bytes: %w (%d bytes)", s.Size, ErrTooLarge, lim.Section)
	}
	if err := within(s.Off, s.Size, size); err != nil {
		return fmt.Errorf("section names: %w", err)
	}
	return nil
}

// table checks a header table of n entries of entsize bytes at off.
func table(what string, off, n, entsize uint64, size int64, lim Limits) error {
	if n != 0 && entsize > uint64(lim.Section)/n {
		return fmt.Errorf("%s: %d of %d bytes: %w (%d bytes)", what, n, entsize, ErrTooLarge, lim.Section)
	}
	if err := within(off, n*entsize, size); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// readHeaders reads the ELF header of r, if it is one.
func readHeaders(r io.ReaderAt) (headers, bool) {
	var h headers
	var ident [elf.EI_NIDENT]byte
	if _, err := r.ReadAt(ident[:], 0); err != nil || string(ident[:4]) != elf.ELFMAG {
		return h, false
	}
	switch elf.Data(ident[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		h.bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		h.bo = binary.BigEndian
	default:
		return h, false
	}
	h.class = elf.Class(ident[elf.EI_CLASS])
	sr := io.NewSectionReader(r, 0, 1<<12)
	switch h.class {
	case elf.ELFCLASS64:
		var e elf.Header64
		if binary.Read(sr, h.bo, &e) != nil {
			return h, false
		}
		h.phoff, h.phentsize, h.phnum = e.Phoff, uint64(e.Phentsize), uint64(e.Phnum)
		h.shoff, h.shentsize, h.shnum, h.shstrndx = e.Shoff, uint64(e.Shentsize), uint64(e.Shnum), uint64(e.Shstrndx)
	case elf.ELFCLASS32:
		var e elf.Header32
		if binary.Read(sr, h.bo, &e) != nil {
			return h, false
		}
		h.phoff, h.phentsize, h.phnum = uint64(e.Phoff), uint64(e.Phentsize), uint64(e.Phnum)
		h.shoff, h.shentsize, h.shnum, h.shstrndx = uint64(e.Shoff), uint64(e.Shentsize), uint64(e.Shnum), uint64(e.Shstrndx)
	default:
		return h, false
	}
	return h, true
}

// section reads the header of section i, as ELF64's; the table holds it
// (table checked that).
func (h headers) section(r io.ReaderAt, i uint64) (elf.Section64, error) {
	sr := io.NewSectionReader(r, int64(h.shoff+i*h.shentsize), int64(h.shentsize))
	if h.class == elf.ELFCLASS64 {
		var s elf.Section64
		err := binary.Read(sr, h.bo, &s)
		return s, err
	}
	var s elf.Section32
	err := binary.Read(sr, h.bo, &s)
	return elf.Section64{Type: s.Type, Flags: uint64(s.Flags), Off: uint64(s.Off), Size: uint64(s.Size), Link: s.Link}, err
}
