package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/safefs/safefstest"
)

const elfSource = "struct point { int x, y; };\nint norm(struct point *p) { return p->x * p->x + p->y * p->y; }\n"

// An object whose headers claim more than the file holds, or than a
// reader should load, is an error wrapping ErrTooLarge, from its headers
// alone: before the fix, elf.NewFile and Data believed them, and a .text
// of 3 GiB in a sparse file took 10 GB. A real object passes.
func TestELFBounds(t *testing.T) {
	obj := safefstest.Compile(t, elfSource, "-g", "-O2")
	zobj := safefstest.Compile(t, elfSource, "-g", "-O2", "-gz=zlib")
	tests := []struct {
		name   string
		file   []byte
		sparse int64 // the file's size, a hole after file; 0: none
		lim    Limits
		want   string // in the error; "": none
	}{
		{name: "real object", file: obj},
		{name: "real compressed object", file: zobj},
		{name: ".text claims 3 GiB past the end", file: safefstest.SetSectionSize(t, obj, ".text", 3<<30), want: "section .text: 3221225472 bytes at 0x40, past the end"},
		{name: ".text claims 3 GiB of a sparse file", file: safefstest.SetSectionSize(t, obj, ".text", 3<<30), sparse: 3<<30 + 1<<20, want: "section .text: 3221225472 bytes"},
		{name: "section names claim 3 GiB of a sparse file", file: safefstest.SetSectionSize(t, obj, ".shstrtab", 3<<30), sparse: 3<<30 + 1<<20, want: "section names: 3221225472 bytes"},
		{name: "compression header claims 1 GiB", file: safefstest.SetCompressedSize(t, zobj, ".debug_info", 1<<30), want: "section .debug_info: 1073741824 bytes"},
		{name: "compression header claims 2 MiB of a few bytes", file: safefstest.SetCompressedSize(t, zobj, ".debug_info", 2<<20), want: "compressed bytes claim 2097152: larger than its bound (64 times)"},
		{name: "a real bomb", file: safefstest.Bomb(t, zobj, ".debug_info", 64<<20), want: "claim 67108864: larger than its bound (64 times)"},
		{name: "symbol table", file: obj, lim: Limits{SymbolTable: 64}, want: "section .symtab: symbol table of"},
		{name: "too many sections", file: obj, lim: Limits{Sections: 4}, want: "sections: larger than its bound (4)"},
		{name: "too much in all", file: obj, lim: Limits{Total: 256}, want: "bytes in all: larger than its bound (256 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x.o")
			if tt.sparse > 0 {
				safefstest.Sparse(t, p, tt.file, tt.sparse)
			} else if err := os.WriteFile(p, tt.file, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ef, err := NewELF(f, tt.lim)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ef.DWARF(); err != nil {
					t.Errorf("DWARF: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewELF = %v, want ErrTooLarge saying %q", err, tt.want)
			}
		})
	}
}

// A compressed section may grow past the ratio while it is small: a tiny
// one compresses oddly, and costs nothing.
func TestELFRatioFloor(t *testing.T) {
	zobj := safefstest.Compile(t, elfSource, "-g", "-gz=zlib")
	p := filepath.Join(t.TempDir(), "x.o")
	if err := os.WriteFile(p, safefstest.SetCompressedSize(t, zobj, ".debug_info", RatioFloor), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The header lies (the data decompresses to less), so the DWARF does
	// not read; the bounds let it try.
	if _, err := NewELF(f, Limits{}); err != nil {
		t.Errorf("NewELF = %v, want no error below RatioFloor", err)
	}
}
