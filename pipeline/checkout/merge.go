package checkout

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// A change is taken to another branch the way git cherry-picks it: a
// three-way merge of each file the change touches, with the change's
// merge-base as the common ancestor, the branch's file as ours and the
// change's as theirs. Where the branch and the change edited different
// lines, both edits are kept, however far the lines moved; where they
// edited the same or adjacent lines differently, that is a conflict, as
// git's merge makes it (identical edits are taken once).

// maxConflictLines bounds each side of a conflict as a report shows it:
// enough to see what differs, short enough for a comment.
const maxConflictLines = 8

// hunk is one edit of a base text: lines [start, end) of base replaced by
// lines.
type hunk struct {
	start, end int
	lines      []string
}

// splitKeep splits after each newline, keeping it, as diffs see lines.
func splitKeep(s string) []string { return splitAfterNewlines(s) }

// edits are the hunks that turn base into other, in order.
func edits(base, other string) []hunk {
	var hs []hunk
	at := 0
	var cur *hunk
	flush := func() {
		if cur != nil {
			hs = append(hs, *cur)
			cur = nil
		}
	}
	for _, d := range diff.Do(base, other) {
		n := len(splitKeep(d.Text))
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			flush()
			at += n
		case diffmatchpatch.DiffDelete:
			if cur == nil {
				cur = &hunk{start: at, end: at}
			}
			at += n
			cur.end = at
		case diffmatchpatch.DiffInsert:
			if cur == nil {
				cur = &hunk{start: at, end: at}
			}
			cur.lines = append(cur.lines, splitKeep(d.Text)...)
		}
	}
	flush()
	return hs
}

// textConflict is a region both sides edited differently: base's lines
// there and each side's.
type textConflict struct {
	line           int // 1-based, in base
	ours, theirs   []string
	oursN, theirsN int // each side's lines before they were cut
}

// merge3 merges the edits base→theirs into ours. Edits whose base ranges
// overlap or touch are one region: taken from the side that alone edited
// it, or once when both made it the same, else a conflict.
func merge3(base, ours, theirs string) (string, []textConflict) {
	b := splitKeep(base)
	eo, et := edits(base, ours), edits(base, theirs)
	var out strings.Builder
	var conflicts []textConflict
	at := 0 // next base line not yet written
	i, j := 0, 0
	for i < len(eo) || j < len(et) {
		// The region starts at the earlier hunk and takes in every hunk
		// of either side that overlaps or touches it.
		start, end := 0, 0
		switch {
		case j >= len(et) || (i < len(eo) && eo[i].start <= et[j].start):
			start, end = eo[i].start, eo[i].end
		default:
			start, end = et[j].start, et[j].end
		}
		i0, j0 := i, j
		for {
			grew := false
			for i < len(eo) && eo[i].start <= end && eo[i].end >= start {
				end = max(end, eo[i].end)
				i++
				grew = true
			}
			for j < len(et) && et[j].start <= end && et[j].end >= start {
				end = max(end, et[j].end)
				j++
				grew = true
			}
			if !grew {
				break
			}
		}
		for _, l := range b[at:start] {
			out.WriteString(l)
		}
		oursText := apply(b, start, end, eo[i0:i])
		theirsText := apply(b, start, end, et[j0:j])
		switch {
		case i == i0: // theirs alone
			out.WriteString(strings.Join(theirsText, ""))
		case j == j0: // ours alone
			out.WriteString(strings.Join(oursText, ""))
		case strings.Join(oursText, "") == strings.Join(theirsText, ""):
			out.WriteString(strings.Join(oursText, ""))
		default:
			conflicts = append(conflicts, textConflict{line: start + 1,
				ours: cut(oursText), theirs: cut(theirsText), oursN: len(oursText), theirsN: len(theirsText)})
		}
		at = end
	}
	for _, l := range b[at:] {
		out.WriteString(l)
	}
	return out.String(), conflicts
}

// apply is base's lines [start, end) with the hunks (inside that range,
// in order) applied.
func apply(b []string, start, end int, hs []hunk) []string {
	var out []string
	at := start
	for _, h := range hs {
		out = append(out, b[at:h.start]...)
		out = append(out, h.lines...)
		at = h.end
	}
	return append(out, b[at:end]...)
}

func cut(lines []string) []string {
	if len(lines) > maxConflictLines {
		return lines[:maxConflictLines]
	}
	return lines
}

// MergeResult says what a three-way merge of a change did.
type MergeResult struct {
	// Merged are the files both the branch and the change had changed
	// since the merge-base, merged line by line without a conflict: what
	// git resolved.
	Merged []string
	// Unchanged says the merge left the branch's tree as it was: the
	// branch has the change already.
	Unchanged bool
}

// MergeChange takes the change base..head to tip as git cherry-picks it:
// every file the change touches is merged three ways (base, tip's, head's)
// and the result is stored as a commit whose parent is tip. When any file
// conflicts, nothing is committed and the error is a *ConflictError with
// each conflicting region and both sides, short.
func MergeChange(s storer.Storer, base, head, tip *object.Commit, msg string, sig object.Signature) (plumbing.Hash, *MergeResult, error) {
	return merge(s, base, head, tip, []plumbing.Hash{tip.Hash}, msg, sig)
}

// MergeUp merges head into tip as php-src's merge-up does (git merge
// PHP-8.4 on PHP-8.5): a three-way merge with their merge-base base,
// stored as a merge commit whose parents are tip and head. Conflicts are
// as MergeChange's.
func MergeUp(s storer.Storer, base, head, tip *object.Commit, msg string, sig object.Signature) (plumbing.Hash, *MergeResult, error) {
	return merge(s, base, head, tip, []plumbing.Hash{tip.Hash, head.Hash}, msg, sig)
}

func merge(s storer.Storer, base, head, tip *object.Commit, parents []plumbing.Hash, msg string, sig object.Signature) (plumbing.Hash, *MergeResult, error) {
	var flat [3]Files // base's, head's, tip's
	for i, c := range []*object.Commit{base, head, tip} {
		tree, err := c.Tree()
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		if flat[i], err = Flatten(tree); err != nil {
			return plumbing.ZeroHash, nil, err
		}
	}
	fb, fh, ft := flat[0], flat[1], flat[2]
	out := maps.Clone(ft)
	res := &MergeResult{}
	var conflicts []HunkConflict
	paths := map[string]bool{}
	for p := range fb {
		paths[p] = true
	}
	for p := range fh {
		paths[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		b, inB := fb[p]
		h, inH := fh[p]
		t, inT := ft[p]
		switch {
		case inB == inH && b == h: // the change leaves it alone
		case inT == inB && t == b: // the branch left it alone: the change's
			if inH {
				out[p] = h
			} else {
				delete(out, p)
			}
		case inT == inH && t == h: // the branch has the change's already
		case !inH:
			conflicts = append(conflicts, HunkConflict{File: p, Reason: "the change deletes it; the branch changed it"})
		case !inT:
			conflicts = append(conflicts, HunkConflict{File: p, Reason: "the change edits it; the branch does not have it"})
		case !textMode(t.Mode) || !textMode(h.Mode) || (inB && !textMode(b.Mode)):
			// A symlink's target or a submodule's commit is no text to
			// merge line by line.
			conflicts = append(conflicts, HunkConflict{File: p, Reason: "a symlink or submodule both changed"})
		default:
			mode := t.Mode
			if inB && h.Mode != b.Mode {
				mode = h.Mode
			}
			var bt []byte
			if inB {
				var err error
				if bt, err = blobText(s, b.Hash); err != nil {
					return plumbing.ZeroHash, nil, err
				}
			}
			ht, err := blobText(s, h.Hash)
			if err != nil {
				return plumbing.ZeroHash, nil, err
			}
			tt, err := blobText(s, t.Hash)
			if err != nil {
				return plumbing.ZeroHash, nil, err
			}
			if isBinary(bt) || isBinary(ht) || isBinary(tt) {
				conflicts = append(conflicts, HunkConflict{File: p, Reason: "a binary file both changed"})
				continue
			}
			merged, cs := merge3(string(bt), string(tt), string(ht))
			for _, c := range cs {
				conflicts = append(conflicts, HunkConflict{File: p, Hunk: fmt.Sprintf("line %d", c.line),
					Reason: "the branch and the change edit these lines differently",
					Branch: strings.Join(c.ours, ""), Change: strings.Join(c.theirs, ""),
					BranchLines: c.oursN, ChangeLines: c.theirsN})
			}
			if len(cs) > 0 {
				continue
			}
			hash, err := WriteBlob(s, []byte(merged))
			if err != nil {
				return plumbing.ZeroHash, nil, err
			}
			out[p] = Entry{Mode: mode, Hash: hash}
			res.Merged = append(res.Merged, p)
		}
	}
	// A file where the other side has a directory (foo and foo/x) would
	// make a tree git cannot check out.
	for _, p := range slices.Sorted(maps.Keys(out)) {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, ok := out[dir]; ok {
				conflicts = append(conflicts, HunkConflict{File: dir, Reason: "a file on one side, a directory on the other (" + p + ")"})
				break
			}
		}
	}
	if len(conflicts) > 0 {
		return plumbing.ZeroHash, res, &ConflictError{Conflicts: conflicts, ThreeWay: true}
	}
	root, err := WriteTree(s, out)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	res.Unchanged = root == tip.TreeHash
	c, err := WriteCommit(s, root, parents, msg, sig)
	return c, res, err
}

// textMode says an entry is a file whose text can be merged: regular or
// executable.
func textMode(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable || m == filemode.Deprecated
}

// maxMergeBlob bounds a file merged: php-src's largest sources are a few
// megabytes.
const maxMergeBlob = 64 << 20

func blobText(s storer.EncodedObjectStorer, h plumbing.Hash) ([]byte, error) {
	b, err := object.GetBlob(s, h)
	if err != nil {
		return nil, err
	}
	if b.Size > maxMergeBlob {
		return nil, fmt.Errorf("blob %s: %d bytes, over the %d a merge reads", h, b.Size, maxMergeBlob)
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(r)
	return buf.Bytes(), err
}

// isBinary is git's test: a NUL byte in the first 8000.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}
