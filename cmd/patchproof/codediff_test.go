package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/safefs/safefstest"
)

// patchproof codediff reads the objects in its confined child: HEAD's
// object beyond the parser's bounds (a .text that claims 3 GiB of a
// sparse file) fails the comparison (exit 1), BASE's cannot be compared
// (exit 2), and good ones compare (exit 0).
func TestCodediffCommandConfined(t *testing.T) {
	obj := safefstest.Compile(t, "int f(int x) { return x + 1; }\n", "-O2", "-fpic")
	good, bad := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(good, "m.o"), obj, 0o644); err != nil {
		t.Fatal(err)
	}
	safefstest.Sparse(t, filepath.Join(bad, "m.o"), safefstest.SetSectionSize(t, obj, ".text", 3<<30), 3<<30+1<<20)
	for _, tt := range []struct {
		name       string
		base, head string
		code       int
		want       string // in stderr
	}{
		{"good", good, good, 0, ""},
		{"HEAD's object", good, bad, 1, "patchproof: head's objects rejected: codediff: read object " + filepath.Join(bad, "m.o") + ": section .text: 3221225472 bytes: larger than its bound"},
		{"BASE's object", bad, good, 2, "section .text: 3221225472 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := patchproof(t.Context(), &stdout, &stderr, []string{"codediff", tt.base, tt.head})
			if code := exitCode(&stderr, err); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr.String(), tt.code, tt.want)
			}
		})
	}
}
