package builders

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCountObjects(t *testing.T) {
	// Six compile rules; zend_highlight.lo is a prerequisite line only,
	// and the suffix and pattern rules name no object.
	n, err := countObjects(filepath.Join("testdata", "Makefile.objects-fixture"))
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("countObjects = %d, want 6", n)
	}

	for _, tc := range []struct {
		name, in string
		want     int
	}{
		{"empty", "", 0},
		{"assignment with a colon", "X = a.lo: b\n\tnot a recipe of X\n", 0},
		{"two targets, one recipe", "a.lo b.lo: a.c\n\tcc -c a.c\n", 2},
		{"rule twice", "a.lo: a.c\n\tcc -c a.c\na.lo: a.c\n\tcc -c a.c\n", 1},
		{"recipe after a blank line", "a.lo: a.h\n\n\tcc -c a.c\n", 0},
		{"no trailing newline", "a.lo: a.c\n\tcc -c a.c", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := countRecipeObjects(strings.NewReader(tc.in))
			if err != nil || n != tc.want {
				t.Errorf("countRecipeObjects(%q) = %d, %v; want %d", tc.in, n, err, tc.want)
			}
		})
	}

	if _, err := countObjects(filepath.Join(t.TempDir(), "Makefile")); err == nil || !strings.Contains(err.Error(), "Makefile") {
		t.Errorf("countObjects of a missing Makefile = %v, want an error naming it", err)
	}
}
