package codediff

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/safefs"
	"github.com/patchproof/patchproof/internal/safefs/safefstest"
)

// hostile is an object of fixture as a pull request's build could write
// it: crafted from gcc's, written at path (a hole after it where sparse).
type hostile struct {
	name   string
	craft  func(t *testing.T, obj []byte) []byte
	sparse int64 // the file's size; 0: as long as it is
	want   string
}

var hostiles = []hostile{
	{name: ".text claims 3 GiB of a sparse file", sparse: 3<<30 + 1<<20, want: "section .text: 3221225472 bytes: larger than its bound",
		craft: func(t *testing.T, obj []byte) []byte { return safefstest.SetSectionSize(t, obj, ".text", 3<<30) }},
	{name: ".text claims 3 GiB past the end", want: "section .text: 3221225472 bytes at 0x40, past the end",
		craft: func(t *testing.T, obj []byte) []byte { return safefstest.SetSectionSize(t, obj, ".text", 3<<30) }},
	{name: "a compression header claims 1 GiB", want: "section .debug_info: 1073741824 bytes: larger than its bound",
		craft: func(t *testing.T, obj []byte) []byte {
			return safefstest.SetCompressedSize(t, obj, ".debug_info", 1<<30)
		}},
	{name: "a function of 32 MiB", sparse: 33 << 20, want: "function spare: 33554432 bytes: larger than its bound",
		craft: func(t *testing.T, obj []byte) []byte {
			return safefstest.SetSymbolSize(t, safefstest.SetSectionSize(t, obj, ".text", 32<<20), "spare", 32<<20)
		}},
}

// write writes h's object at dir/ext/mysqlnd/m.o.
func (h hostile) write(t *testing.T, dir string, obj []byte) {
	t.Helper()
	p := filepath.Join(dir, "ext/mysqlnd/m.o")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	b := h.craft(t, obj)
	if h.sparse > 0 {
		safefstest.Sparse(t, p, b, h.sparse)
	} else if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An object whose headers claim more than a parser should load is an
// error naming it and its section, from its headers: before the fix, the
// sparse one took the test past 3 GB of address space ("fatal error: out
// of memory"), the one past the end was "truncated", and the compressed
// one compared as if nothing were wrong.
func TestObjectBeyondBounds(t *testing.T) {
	good := t.TempDir()
	buildTree(t, good, map[string]string{"m": fixture})
	obj := safefstest.Compile(t, fixture, append(phpCFLAGS, "-g", "-gz=zlib")...)
	for _, h := range hostiles {
		t.Run(h.name, func(t *testing.T) {
			head := t.TempDir()
			h.write(t, head, obj)
			_, err := CompareDirs(good, head, Options{})
			var he *headError
			if !errors.Is(err, safefs.ErrTooLarge) || !errors.As(err, &he) {
				t.Fatalf("CompareDirs = %v, want head's error wrapping ErrTooLarge", err)
			}
			if !strings.Contains(err.Error(), "m.o") || !strings.Contains(err.Error(), h.want) {
				t.Errorf("CompareDirs = %q, want the object and %q", err, h.want)
			}
		})
	}
}
