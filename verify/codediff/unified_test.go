package codediff

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// listingOf builds a listing: one entry per string, at offsets 0, 4, 8...;
// "|" separates an instruction from the references under it.
func listingOf(ss ...string) []entry {
	var out []entry
	for i, s := range ss {
		parts := strings.Split(s, "|")
		e := entry{{off: 4 * i, text: parts[0]}}
		for _, r := range parts[1:] {
			e = append(e, line{off: 4*i + 1, ref: true, text: r})
		}
		out = append(out, e)
	}
	return out
}

func TestUnified(t *testing.T) {
	long := []string{"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8", "i9", "i10", "i11"}
	tests := []struct {
		name string
		a, b []string
		want string
	}{{
		name: "one change in the middle",
		a:    long,
		b:    []string{"i0", "i1", "i2", "i3", "i4", "X", "i6", "i7", "i8", "i9", "i10", "i11"},
		want: `@@ -3,7 +3,7 @@
      8:  i2
      c:  i3
     10:  i4
-    14:  i5
+    14:  X
     18:  i6
     1c:  i7
     20:  i8
`,
	}, {
		name: "changes far apart make two hunks",
		a:    long,
		b:    []string{"X", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8", "i9", "i10", "Y"},
		want: `@@ -1,4 +1,4 @@
-     0:  i0
+     0:  X
      4:  i1
      8:  i2
      c:  i3
@@ -9,4 +9,4 @@
     20:  i8
     24:  i9
     28:  i10
-    2c:  i11
+    2c:  Y
`,
	}, {
		name: "changes six apart share a hunk",
		a:    long,
		b:    []string{"i0", "X", "i2", "i3", "i4", "i5", "i6", "i7", "Y", "i9", "i10", "i11"},
		want: `@@ -1,12 +1,12 @@
      0:  i0
-     4:  i1
+     4:  X
      8:  i2
      c:  i3
     10:  i4
     14:  i5
     18:  i6
     1c:  i7
-    20:  i8
+    20:  Y
     24:  i9
     28:  i10
     2c:  i11
`,
	}, {
		name: "an insertion shifts addresses but not the match",
		a:    []string{"push", "mov", "call|R_X86_64_PLT32 foo", "ret"},
		b:    []string{"push", "sub", "mov", "call|R_X86_64_PLT32 foo", "ret"},
		want: `@@ -1,5 +1,6 @@
      0:  push
+     4:  sub
      8:  mov
      c:  call
      d:          R_X86_64_PLT32 foo
     10:  ret
`,
	}, {
		name: "a changed reference replaces its whole instruction",
		a:    []string{"lea|R_X86_64_PC32 \"a\"", "call|R_X86_64_PLT32 puts"},
		b:    []string{"lea|R_X86_64_PC32 \"b\"", "call|R_X86_64_PLT32 puts"},
		want: `@@ -1,4 +1,4 @@
-     0:  lea
-     1:          R_X86_64_PC32 "a"
+     0:  lea
+     1:          R_X86_64_PC32 "b"
      4:  call
      5:          R_X86_64_PLT32 puts
`,
	}, {
		name: "from nothing",
		a:    nil,
		b:    []string{"ret"},
		want: `@@ -0,0 +1 @@
+     0:  ret
`,
	}, {
		name: "to nothing",
		a:    []string{"nop", "ret"},
		b:    nil,
		want: `@@ -1,2 +0,0 @@
-     0:  nop
-     4:  ret
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unified("a", "b", listingOf(tt.a...), listingOf(tt.b...))
			if diff := cmp.Diff("--- a\n+++ b\n"+tt.want, got); diff != "" {
				t.Errorf("unified (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiffLinesShortest checks on random inputs that the edit script turns
// a into b and is as short as the longest common subsequence allows.
func TestDiffLinesShortest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 500 {
		a := randomLines(rng, rng.IntN(30))
		b := randomLines(rng, rng.IntN(30))
		edits := diffLines(a, b)
		checkScript(t, a, b, edits)
		changes := 0
		for _, e := range edits {
			if e.op != opEqual {
				changes++
			}
		}
		if want := len(a) + len(b) - 2*lcs(a, b); changes != want {
			t.Fatalf("case %d: %d changes, shortest is %d\na=%q\nb=%q", n, changes, want, a, b)
		}
	}
}

// TestDiffLinesTooFarApart checks the fallback past maxEditDistance.
func TestDiffLinesTooFarApart(t *testing.T) {
	var a, b []string
	for range maxEditDistance {
		a = append(a, "a", "same")
		b = append(b, "b", "same")
	}
	checkScript(t, a, b, diffLines(a, b))
}

func randomLines(rng *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('a' + rng.IntN(4)))
	}
	return out
}

func checkScript(t *testing.T, a, b []string, edits []edit) {
	t.Helper()
	var ga, gb []string
	for _, e := range edits {
		switch e.op {
		case opEqual:
			if a[e.a] != b[e.b] {
				t.Fatalf("equal edit pairs %q with %q", a[e.a], b[e.b])
			}
			ga, gb = append(ga, a[e.a]), append(gb, b[e.b])
		case opDelete:
			ga = append(ga, a[e.a])
		case opInsert:
			gb = append(gb, b[e.b])
		}
	}
	if !slices.Equal(ga, a) || !slices.Equal(gb, b) {
		t.Fatalf("script does not rebuild its inputs:\na=%q got %q\nb=%q got %q", a, ga, b, gb)
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}
