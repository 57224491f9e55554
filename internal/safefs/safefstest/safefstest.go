// Package safefstest makes the hostile ELF files the readers of a build's
// objects and binaries are tested with: a real object from gcc, then one
// header or reference of it rewritten, as a pull request's build could
// write it. Every function takes the file's bytes and returns a patched
// copy; each supports only the little-endian ELF64 files gcc makes here.
package safefstest

import (
	"bytes"
	"compress/zlib"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/patchproof/patchproof/internal/childenv"
)

// Compile is gcc's object of the C source src, compiled with flags and -c;
// the test is skipped where gcc is not installed.
func Compile(t *testing.T, src string, flags ...string) []byte {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	c, o := filepath.Join(dir, "x.c"), filepath.Join(dir, "x.o")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(slices.Clone(flags), "-c", c, "-o", o)
	cmd := exec.CommandContext(t.Context(), gcc, args...)
	cmd.Env = childenv.For(childenv.Tool)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	b, err := os.ReadFile(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The fields of an ELF64 section header this package rewrites, by offset.
const (
	shOffset = 0x18
	shSize   = 0x20
	chSize   = 8 // a compression header's uncompressed size
)

// header is the offset of section name's header in obj, with the section.
func header(t *testing.T, obj []byte, name string) (int, *elf.Section) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	if f.Class != elf.ELFCLASS64 || f.ByteOrder != binary.LittleEndian {
		t.Fatalf("not a little-endian ELF64 file")
	}
	shoff := binary.LittleEndian.Uint64(obj[0x28:])
	shentsize := binary.LittleEndian.Uint16(obj[0x3a:])
	for i, s := range f.Sections {
		if s.Name == name {
			return int(shoff) + i*int(shentsize), s
		}
	}
	t.Fatalf("no section %s", name)
	return 0, nil
}

// SetSectionSize is obj with section name's header claiming size bytes.
func SetSectionSize(t *testing.T, obj []byte, name string, size uint64) []byte {
	t.Helper()
	out := slices.Clone(obj)
	h, _ := header(t, out, name)
	binary.LittleEndian.PutUint64(out[h+shSize:], size)
	return out
}

// SetCompressedSize is obj with the compression header of section name, a
// compressed one (gcc -gz), claiming size bytes once decompressed.
func SetCompressedSize(t *testing.T, obj []byte, name string, size uint64) []byte {
	t.Helper()
	out := slices.Clone(obj)
	_, s := header(t, out, name)
	if s.Flags&elf.SHF_COMPRESSED == 0 {
		t.Fatalf("section %s is not compressed", name)
	}
	binary.LittleEndian.PutUint64(out[int(s.Offset)+chSize:], size)
	return out
}

// Bomb is obj with section name, a compressed one (gcc -gz=zlib), holding
// size zero bytes instead, honestly declared: its compression header says
// size, and its zlib data, appended to the file, decompresses to that.
// Zeros compress some 800 times: a few hundred KiB say half a GiB.
func Bomb(t *testing.T, obj []byte, name string, size int) []byte {
	t.Helper()
	out := slices.Clone(obj)
	h, s := header(t, out, name)
	if s.Flags&elf.SHF_COMPRESSED == 0 {
		t.Fatalf("section %s is not compressed", name)
	}
	var z bytes.Buffer
	w, err := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for left := size; left > 0; left -= len(zeros) {
		if _, err := w.Write(zeros[:min(left, len(zeros))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The section's own compression header, then the new data, at the
	// end of the file, where nothing else lies.
	chdr := slices.Clone(out[s.Offset : s.Offset+24])
	binary.LittleEndian.PutUint64(chdr[chSize:], uint64(size))
	at := len(out)
	out = append(append(out, chdr...), z.Bytes()...)
	binary.LittleEndian.PutUint64(out[h+shOffset:], uint64(at))
	binary.LittleEndian.PutUint64(out[h+shSize:], uint64(len(chdr)+z.Len()))
	return out
}

// SetSymbolSize is obj with the st_size of its symbol name at size.
func SetSymbolSize(t *testing.T, obj []byte, name string, size uint64) []byte {
	t.Helper()
	out := slices.Clone(obj)
	f, err := elf.NewFile(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(syms, func(s elf.Symbol) bool { return s.Name == name })
	if i < 0 {
		t.Fatalf("no symbol %s", name)
	}
	// Symbols leaves out the table's first, null, entry; st_size is the
	// last field of an entry of 24 bytes.
	const entsize, stSize = 24, 16
	at := f.Section(".symtab").Offset + uint64(i+1)*entsize + stSize
	binary.LittleEndian.PutUint64(out[at:], size)
	return out
}

// Types are the offsets of the DIEs of obj's DWARF (gcc -g, one unit, not
// compressed) with a name, by tag and name: Types(t, obj)[dwarf.TagTypedef]["STATS"].
func Types(t *testing.T, obj []byte) map[dwarf.Tag]map[string]dwarf.Offset {
	t.Helper()
	d := debugInfo(t, obj)
	out := map[dwarf.Tag]map[string]dwarf.Offset{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return out
		}
		if name, ok := e.Val(dwarf.AttrName).(string); ok {
			if out[e.Tag] == nil {
				out[e.Tag] = map[string]dwarf.Offset{}
			}
			out[e.Tag][name] = e.Offset
		}
	}
}

// TypeOf is the offset of the DIE the DW_AT_type of the DIE at off names.
func TypeOf(t *testing.T, obj []byte, off dwarf.Offset) dwarf.Offset {
	t.Helper()
	e, _ := entry(t, debugInfo(t, obj), off)
	to, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		t.Fatalf("the DIE at %#x has no DW_AT_type", off)
	}
	return to
}

// Retype is obj with the DW_AT_type of the DIE at from naming the DIE at
// to: a reference gcc writes as DW_FORM_ref4, relative to the unit, which
// is the first of .debug_info and starts it.
func Retype(t *testing.T, obj []byte, from, to dwarf.Offset) []byte {
	t.Helper()
	d := debugInfo(t, obj)
	e, end := entry(t, d, from)
	old, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		t.Fatalf("the DIE at %#x has no DW_AT_type", from)
	}
	out := slices.Clone(obj)
	_, s := header(t, out, ".debug_info")
	if s.Flags&elf.SHF_COMPRESSED != 0 {
		t.Fatalf(".debug_info is compressed")
	}
	die := out[s.Offset+uint64(from) : s.Offset+uint64(end)]
	ref := binary.LittleEndian.AppendUint32(nil, uint32(old))
	if bytes.Count(die, ref) != 1 {
		t.Fatalf("the DIE at %#x holds its type's reference %x %d times, not once", from, ref, bytes.Count(die, ref))
	}
	binary.LittleEndian.PutUint32(die[bytes.Index(die, ref):], uint32(to))
	return out
}

func debugInfo(t *testing.T, obj []byte) *dwarf.Data {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// entry is the DIE at off and where the next one starts.
func entry(t *testing.T, d *dwarf.Data, off dwarf.Offset) (*dwarf.Entry, dwarf.Offset) {
	t.Helper()
	r := d.Reader()
	r.Seek(off)
	e, err := r.Next()
	if err != nil || e == nil || e.Offset != off {
		t.Fatalf("no DIE at %#x: %v", off, err)
	}
	// A null entry (the end of a DIE's children) has no offset: the
	// next DIE that is one bounds this one, with null bytes at most.
	for {
		next, err := r.Next()
		if err != nil || next == nil {
			t.Fatalf("no DIE after %#x: %v", off, err)
		}
		if next.Tag != 0 {
			return e, next.Offset
		}
	}
}

// Sparse writes b to path and extends the file to size bytes without
// writing them: a hole, which costs no disk and reads as zeros.
func Sparse(t *testing.T, path string, b []byte, size int64) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}
