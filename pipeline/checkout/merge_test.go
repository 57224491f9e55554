package checkout

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
)

func lines(ls ...string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

func TestMerge3(t *testing.T) {
	base := lines("a", "b", "c", "d", "e", "f", "g")
	for _, tt := range []struct {
		name, ours, theirs, want string
		conflicts                []textConflict
	}{
		{"theirs alone", base, lines("a", "B", "c", "d", "e", "f", "g"), lines("a", "B", "c", "d", "e", "f", "g"), nil},
		{"ours alone", lines("a", "b", "c", "D", "e", "f", "g"), base, lines("a", "b", "c", "D", "e", "f", "g"), nil},
		// What a strict patch with three lines of context refuses: the
		// branch changed a line two away from the change's.
		{"near but apart", lines("a", "B", "c", "d", "e", "f", "g"), lines("a", "b", "c", "D", "x", "e", "f", "g"),
			lines("a", "B", "c", "D", "x", "e", "f", "g"), nil},
		{"moved by lines added above", lines("new1", "new2", "a", "b", "c", "d", "e", "f", "g"), lines("a", "b", "c", "d", "E", "f", "g"),
			lines("new1", "new2", "a", "b", "c", "d", "E", "f", "g"), nil},
		{"the same edit on both", lines("a", "b", "C", "d", "e", "f", "g"), lines("a", "b", "C", "d", "e", "f", "g"), lines("a", "b", "C", "d", "e", "f", "g"), nil},
		{"the same line deleted by both, one more by the change", lines("a", "b", "c", "e", "f", "g"), lines("a", "c", "e", "f", "g"),
			lines("a", "c", "e", "f", "g"), nil},
		{"adjacent edits conflict, as git's do", lines("a", "b", "C", "d", "e", "f", "g"), lines("a", "b", "c", "D", "e", "f", "g"),
			"", []textConflict{{line: 3, ours: []string{"C\n", "d\n"}, theirs: []string{"c\n", "D\n"}, oursN: 2, theirsN: 2}}},
		{"one line edited two ways", lines("a", "b", "c", "d", "E1", "f", "g"), lines("a", "b", "c", "d", "E2", "f", "g"),
			"", []textConflict{{line: 5, ours: []string{"E1\n"}, theirs: []string{"E2\n"}, oursN: 1, theirsN: 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, conflicts := merge3(base, tt.ours, tt.theirs)
			if d := cmp.Diff(tt.conflicts, conflicts, cmp.AllowUnexported(textConflict{})); d != "" {
				t.Fatalf("conflicts (-want +got):\n%s", d)
			}
			if len(conflicts) == 0 && got != tt.want {
				t.Errorf("merged:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// merge3 agrees with git merge-file on random edits of a file of distinct
// lines: the same files merge cleanly, to the same text, and the same ones
// conflict.
func TestMerge3AgreesWithGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git merge-file is the reference: %v", err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	fresh := 0
	edit := func(base []string) []string {
		out := append([]string(nil), base...)
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(out) + 1)
			fresh++
			switch rng.IntN(3) {
			case 0: // insert
				out = append(out[:at], append([]string{fmt.Sprintf("new%d", fresh)}, out[at:]...)...)
			case 1: // delete
				if at < len(out) {
					out = append(out[:at], out[at+1:]...)
				}
			default: // change
				if at < len(out) {
					out[at] = fmt.Sprintf("changed%d", fresh)
				}
			}
		}
		return out
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clean, conflicted := 0, 0
	for i := range 300 {
		var b []string
		for k := range 12 {
			b = append(b, fmt.Sprintf("line%d", k))
		}
		base, ours, theirs := lines(b...), lines(edit(b)...), lines(edit(b)...)
		got, conflicts := merge3(base, ours, theirs)
		cmd := exec.Command(git, "merge-file", "-p", write("ours", ours), write("base", base), write("theirs", theirs))
		out, err := cmd.Output()
		var ee *exec.ExitError
		gitConflicts := errors.As(err, &ee) && ee.ExitCode() > 0
		if err != nil && !gitConflicts {
			t.Fatal(err)
		}
		switch {
		case gitConflicts != (len(conflicts) > 0):
			t.Errorf("case %d: git conflicts %v, merge3 %d conflicts\nbase:\n%sours:\n%stheirs:\n%s", i, gitConflicts, len(conflicts), base, ours, theirs)
		case !gitConflicts && got != string(out):
			t.Errorf("case %d: merged\n%s\ngit merged\n%s", i, got, out)
		case gitConflicts:
			conflicted++
		default:
			clean++
		}
	}
	if clean < 50 || conflicted < 50 {
		t.Errorf("%d clean, %d conflicting of 300: the cases do not exercise both", clean, conflicted)
	}
}

// The change taken to a branch three ways: a file both changed merges (the
// strict patch would not apply there), a file only the change touched is
// the change's, a conflict commits nothing and names both sides.
func TestMergeChange(t *testing.T) {
	s := memory.NewStorage()
	sig := testSig
	commit := func(parent *object.Commit, files map[string]string) *object.Commit {
		t.Helper()
		if parent == nil {
			return commitTree(t, s, files)
		}
		return commitTree(t, s, files, parent.Hash)
	}
	stats := lines("a", "b", "c", "d", "e", "f", "g")
	base := commit(nil, map[string]string{"stats.c": stats, "other.c": "x\n"})
	head := commit(base, map[string]string{"stats.c": lines("a", "b", "c", "D", "e", "f", "g"), "other.c": "y\n", "new.h": "n\n"})
	near := commit(base, map[string]string{"stats.c": lines("a", "B", "c", "d", "e", "f", "g"), "other.c": "x\n"})
	clash := commit(base, map[string]string{"stats.c": lines("a", "b", "c", "D2", "e", "f", "g"), "other.c": "x\n"})

	h, res, err := MergeChange(s, base, head, near, "backport", sig)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"stats.c"}, res.Merged); d != "" {
		t.Errorf("merged files (-want +got):\n%s", d)
	}
	got, err := object.GetCommit(s, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ParentHashes) != 1 || got.ParentHashes[0] != near.Hash {
		t.Errorf("parents %v, want the branch's tip", got.ParentHashes)
	}
	for p, want := range map[string]string{"stats.c": lines("a", "B", "c", "D", "e", "f", "g"), "other.c": "y\n", "new.h": "n\n"} {
		f, err := got.File(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if text, _ := f.Contents(); text != want {
			t.Errorf("%s = %q, want %q", p, text, want)
		}
	}

	// The branch has the change already: the merge changes nothing there.
	if _, res, err := MergeChange(s, base, head, head, "backport", sig); err != nil || !res.Unchanged {
		t.Errorf("onto the head itself: %+v, %v; want Unchanged", res, err)
	}
	if _, res, err := MergeChange(s, base, head, near, "backport", sig); err != nil || res.Unchanged {
		t.Errorf("onto PHP-8.4: %+v, %v; want a change", res, err)
	}
	// A file where the branch has a directory, and a symlink both changed.
	dirs := commit(base, map[string]string{"stats.c": stats, "other.c": "x\n", "new.h/x": "d\n"})
	_, _, err = MergeChange(s, base, head, dirs, "backport", sig)
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].File != "new.h" || !strings.Contains(ce.Conflicts[0].Reason, "a directory") {
		t.Errorf("a file onto a directory: %v, want a conflict naming new.h", err)
	}
	link := func(c *object.Commit, target string) *object.Commit {
		t.Helper()
		tree, _ := c.Tree()
		flat, err := Flatten(tree)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := WriteBlob(s, []byte(target))
		flat["ln"] = Entry{Mode: 0o120000, Hash: h}
		root, _ := WriteTree(s, flat)
		ch, err := WriteCommit(s, root, []plumbing.Hash{c.Hash}, "link", sig)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := object.GetCommit(s, ch)
		return got
	}
	lb := link(base, "a")
	_, _, err = MergeChange(s, lb, link(lb, "b"), link(lb, "c"), "backport", sig)
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].File != "ln" || !strings.Contains(ce.Conflicts[0].Reason, "symlink") {
		t.Errorf("a symlink both changed: %v, want a conflict naming it", err)
	}

	_, _, err = MergeChange(s, base, head, clash, "backport", sig)
	if !errors.As(err, &ce) || !ce.ThreeWay || len(ce.Conflicts) != 1 {
		t.Fatalf("err = %v, want one three-way conflict", err)
	}
	c := ce.Conflicts[0]
	if c.File != "stats.c" || c.Hunk != "line 4" || c.Branch != "D2\n" || c.Change != "D\n" {
		t.Errorf("conflict %+v, want stats.c at line 4, the branch's D2 against the change's D", c)
	}
}
