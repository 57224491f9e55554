package checkout

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
)

const changePatch = `A change, with a preamble that is not part of any file.

diff --git a/ext/mysqlnd/stats.h b/ext/mysqlnd/stats.h
index 1111111..2222222 100644
--- a/ext/mysqlnd/stats.h
+++ b/ext/mysqlnd/stats.h
@@ -2,3 +2,3 @@
 b
-c
+C
 d
@@ -8,3 +8,4 @@
 h
 i
+i2
 j
diff --git a/ext/mysqlnd/new.c b/ext/mysqlnd/new.c
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/ext/mysqlnd/new.c
@@ -0,0 +1,2 @@
+int x;
+int y;
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 4444444..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
`

// commitTree commits files (path: text) to s with the parents given.
func commitTree(t *testing.T, s *memory.Storage, files map[string]string, parents ...plumbing.Hash) *object.Commit {
	t.Helper()
	flat := Files{}
	for p, c := range files {
		h, err := WriteBlob(s, []byte(c))
		if err != nil {
			t.Fatal(err)
		}
		flat[p] = Entry{Mode: 0o100644, Hash: h}
	}
	root, err := WriteTree(s, flat)
	if err != nil {
		t.Fatal(err)
	}
	h, err := WriteCommit(s, root, parents, "base", testSig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := object.GetCommit(s, h)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func treeContents(t *testing.T, s *memory.Storage, h plumbing.Hash) map[string]string {
	t.Helper()
	c, err := object.GetCommit(s, h)
	if err != nil {
		t.Fatal(err)
	}
	tree, _ := c.Tree()
	out := map[string]string{}
	tree.Files().ForEach(func(f *object.File) error {
		out[f.Name], _ = f.Contents()
		return nil
	})
	return out
}

func TestApplyPatch(t *testing.T) {
	lines := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n"
	tests := []struct {
		name      string
		stats     string
		want      string
		conflicts []HunkConflict
	}{
		{name: "exact", stats: lines, want: "a\nb\nC\nd\ne\nf\ng\nh\ni\ni2\nj\nk\n"},
		{
			name:  "at an offset, as on another branch",
			stats: "new 1\nnew 2\n" + lines,
			want:  "new 1\nnew 2\na\nb\nC\nd\ne\nf\ng\nh\ni\ni2\nj\nk\n",
		},
		{
			name:  "conflict in the second hunk",
			stats: "a\nb\nc\nd\ne\nf\ng\nh\nI\nj\nk\n",
			conflicts: []HunkConflict{{
				File: "ext/mysqlnd/stats.h", Hunk: "@@ -8,3 +8,4 @@", Reason: "old lines not found",
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := memory.NewStorage()
			base := commitTree(t, s, map[string]string{"ext/mysqlnd/stats.h": tt.stats, "gone.txt": "bye\n", "keep": "k\n"})
			h, err := ApplyPatch(s, base, strings.NewReader(changePatch), "change\n", testSig)
			if tt.conflicts != nil {
				var ce *ConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("ApplyPatch = %v, want a *ConflictError", err)
				}
				if d := cmp.Diff(tt.conflicts, ce.Conflicts); d != "" {
					t.Errorf("conflicts (-want +got):\n%s", d)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"ext/mysqlnd/stats.h": tt.want, "ext/mysqlnd/new.c": "int x;\nint y;\n", "keep": "k\n"}
			if d := cmp.Diff(want, treeContents(t, s, h)); d != "" {
				t.Errorf("patched tree (-want +got):\n%s", d)
			}
			c, _ := object.GetCommit(s, h)
			if len(c.ParentHashes) != 1 || c.ParentHashes[0] != base.Hash {
				t.Errorf("parents = %v, want [%s]", c.ParentHashes, base.Hash)
			}
		})
	}
}

func TestApplyPatchMissingFile(t *testing.T) {
	s := memory.NewStorage()
	base := commitTree(t, s, map[string]string{"keep": "k\n", "gone.txt": "bye\n"})
	_, err := ApplyPatch(s, base, strings.NewReader(changePatch), "change\n", testSig)
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].File != "ext/mysqlnd/stats.h" {
		t.Fatalf("ApplyPatch = %v, want one conflict naming ext/mysqlnd/stats.h", err)
	}
	if _, err := ApplyPatch(s, base, strings.NewReader("no diff here\n"), "x", testSig); err == nil {
		t.Error("ApplyPatch(no changes) succeeded")
	}
}
