package checkout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// HunkConflict is one hunk of a patch that did not apply, or one region of
// a file a three-way merge could not resolve.
type HunkConflict struct {
	File string `json:"file"`
	// Hunk is where: a patch hunk's header ("@@ -203,7 +203,11 @@ ..."),
	// or a merge's "line N" of the merge-base's file.
	Hunk   string `json:"hunk"`
	Reason string `json:"reason"`
	// Branch and Change are a merge conflict's two sides: the lines the
	// target branch has there and the lines the change has, each cut to
	// a few (BranchLines and ChangeLines are how many there are).
	Branch      string `json:"branch,omitempty"`
	Change      string `json:"change,omitempty"`
	BranchLines int    `json:"branch_lines,omitempty"`
	ChangeLines int    `json:"change_lines,omitempty"`
}

// ConflictError says which files and hunks of a patch did not apply, or,
// ThreeWay, which regions a three-way merge could not resolve.
type ConflictError struct {
	Conflicts []HunkConflict
	ThreeWay  bool
}

func (e *ConflictError) Error() string {
	var parts []string
	for _, c := range e.Conflicts {
		parts = append(parts, strings.TrimSpace(c.File+" "+c.Hunk)+": "+c.Reason)
	}
	if e.ThreeWay {
		regions := "regions"
		if len(e.Conflicts) == 1 {
			regions = "region"
		}
		return fmt.Sprintf("merge conflicts: %d %s: %s", len(e.Conflicts), regions, strings.Join(parts, "; "))
	}
	return fmt.Sprintf("patch does not apply: %d hunks failed: %s", len(e.Conflicts), strings.Join(parts, "; "))
}

// ApplyPatch applies a git-format patch to base's tree and stores the result
// as a commit whose parent is base. Hunks may apply at an offset from their
// stated line, as with git apply, but never with fuzz. When any hunk fails,
// nothing is committed and the error is a *ConflictError naming every failed
// hunk.
func ApplyPatch(s storer.Storer, base *object.Commit, patch io.Reader, msg string, sig object.Signature) (plumbing.Hash, error) {
	files, _, err := gitdiff.Parse(patch)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("parse patch: %w", err)
	}
	if len(files) == 0 {
		return plumbing.ZeroHash, errors.New("parse patch: no file changes in it")
	}
	tree, err := base.Tree()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	flat, err := Flatten(tree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var conflicts []HunkConflict
	for _, f := range files {
		cs, err := applyFile(s, tree, flat, f)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		conflicts = append(conflicts, cs...)
	}
	if len(conflicts) > 0 {
		return plumbing.ZeroHash, &ConflictError{Conflicts: conflicts}
	}
	root, err := WriteTree(s, flat)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return WriteCommit(s, root, []plumbing.Hash{base.Hash}, msg, sig)
}

func applyFile(s storer.EncodedObjectStorer, tree *object.Tree, flat Files, f *gitdiff.File) ([]HunkConflict, error) {
	name := f.NewName
	if f.IsDelete {
		name = f.OldName
	}
	if f.IsBinary {
		return []HunkConflict{{File: name, Reason: "binary patches are not supported"}}, nil
	}
	var src []byte
	mode := filemode.Regular
	if !f.IsNew {
		old, ok := flat[f.OldName]
		if !ok {
			return []HunkConflict{{File: f.OldName, Reason: "file does not exist in the target tree"}}, nil
		}
		mode = old.Mode
		file, err := tree.File(f.OldName)
		if err != nil {
			return nil, err
		}
		c, err := file.Contents()
		if err != nil {
			return nil, err
		}
		src = []byte(c)
	} else if _, exists := flat[f.NewName]; exists {
		return []HunkConflict{{File: f.NewName, Reason: "file to be created already exists"}}, nil
	}
	out, conflicts := applyText(name, src, f.TextFragments)
	if len(conflicts) > 0 {
		return conflicts, nil
	}
	delete(flat, f.OldName)
	if f.IsDelete {
		return nil, nil
	}
	if f.NewMode != 0 {
		if m, err := filemode.NewFromOSFileMode(f.NewMode); err == nil {
			mode = m
		}
	}
	h, err := WriteBlob(s, out)
	if err != nil {
		return nil, err
	}
	flat[f.NewName] = Entry{Mode: mode, Hash: h}
	return nil, nil
}

// applyText applies fragments in order, each at the position nearest to the
// one it states (adjusted by the drift of the hunks before it) where its old
// lines match exactly.
func applyText(name string, src []byte, frags []*gitdiff.TextFragment) ([]byte, []HunkConflict) {
	lines := splitLines(src)
	var out [][]byte
	var conflicts []HunkConflict
	next, drift := 0, 0 // next unconsumed source line; offset found so far
	for _, frag := range frags {
		var old, neu [][]byte
		for _, l := range frag.Lines {
			if l.Old() {
				old = append(old, []byte(l.Line))
			}
			if l.New() {
				neu = append(neu, []byte(l.Line))
			}
		}
		want := int(frag.OldPosition) - 1 + drift
		if frag.OldLines == 0 {
			want = int(frag.OldPosition) + drift // insertion after that line
		}
		at := findLines(lines, old, want, next)
		if at < 0 {
			conflicts = append(conflicts, HunkConflict{File: name, Hunk: strings.TrimSpace(frag.Header()), Reason: "old lines not found"})
			continue
		}
		drift = at - (want - drift)
		out = append(out, lines[next:at]...)
		out = append(out, neu...)
		next = at + len(old)
	}
	out = append(out, lines[next:]...)
	return bytes.Join(out, nil), conflicts
}

// findLines returns the index at or after min, nearest to want, where old
// occurs in lines; -1 if nowhere.
func findLines(lines, old [][]byte, want, min int) int {
	match := func(at int) bool {
		if at < min || at+len(old) > len(lines) {
			return false
		}
		for i, l := range old {
			if !bytes.Equal(lines[at+i], l) {
				return false
			}
		}
		return true
	}
	for d := 0; want-d >= min || want+d <= len(lines); d++ {
		if match(want - d) {
			return want - d
		}
		if d > 0 && match(want+d) {
			return want + d
		}
	}
	return -1
}

// splitLines splits after each newline, keeping it, as gitdiff's lines do.
func splitLines(b []byte) [][]byte { return splitAfterNewlines(b) }

// splitAfterNewlines splits s after each newline, keeping it; a last line
// without one is the last item.
func splitAfterNewlines[T ~string | ~[]byte](s T) []T {
	var out []T
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		if i == len(s) {
			return append(out, s)
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}
