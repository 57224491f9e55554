package codediff

import (
	"fmt"
	"strings"
)

// editOp is one step of an edit script.
type editOp int8

const (
	opEqual editOp = iota
	opDelete
	opInsert
)

// edit is one line of an edit script: a line of a kept (opEqual), of a
// dropped (opDelete) or of b added (opInsert).
type edit struct {
	op   editOp
	a, b int // index into a (opEqual, opDelete) and b (opEqual, opInsert)
}

// maxEditDistance bounds Myers' search, whose trace grows with the square of
// the distance. Past it the middle is shown as replaced wholesale, which is
// still a correct diff.
const maxEditDistance = 2000

// diffLines returns a shortest edit script from a to b (Myers, "An O(ND)
// Difference Algorithm and Its Variations", 1986), common prefix and suffix
// first taken off.
func diffLines(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []edit
	for i := 0; i < pre; i++ {
		out = append(out, edit{opEqual, i, i})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	mid, ok := myers(ma, mb)
	if !ok {
		mid = mid[:0]
		for i := range ma {
			mid = append(mid, edit{op: opDelete, a: i})
		}
		for j := range mb {
			mid = append(mid, edit{op: opInsert, b: j})
		}
	}
	for _, e := range mid {
		out = append(out, edit{e.op, e.a + pre, e.b + pre})
	}
	for i := 0; i < suf; i++ {
		out = append(out, edit{opEqual, len(a) - suf + i, len(b) - suf + i})
	}
	return out
}

// myers returns the edit script, or false when the distance exceeds
// maxEditDistance.
func myers(a, b []string) ([]edit, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEditDistance)
	// v[k+off] is the furthest x reached on diagonal k = x-y. trace[d]
	// keeps v as it was before round d, over the diagonals round d reads.
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	found := false
	for d := 0; d <= limit && !found; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1] // down: insert b[y]
			} else {
				x = v[off+k-1] + 1 // right: delete a[x]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
	}
	if !found {
		return nil, false
	}
	var rev []edit
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		tv := trace[d]
		at := func(k int) int { return tv[k+d+1] }
		k := x - y
		var pk int
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		if d == 0 {
			px, py = 0, 0
		}
		for x > px && y > py {
			x--
			y--
			rev = append(rev, edit{opEqual, x, y})
		}
		if d > 0 {
			if x == px {
				y--
				rev = append(rev, edit{op: opInsert, b: y})
			} else {
				x--
				rev = append(rev, edit{op: opDelete, a: x})
			}
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, true
}

// unifiedContext is how many unchanged entries surround each change.
const unifiedContext = 3

// unified renders a diff of two listings in unified format. Entries are
// compared by their text; their addresses are shown but do not count.
func unified(aName, bName string, a, b []entry) string {
	ak, bk := make([]string, len(a)), make([]string, len(b))
	for i, e := range a {
		ak[i] = e.key()
	}
	for i, e := range b {
		bk[i] = e.key()
	}
	edits := diffLines(ak, bk)
	// Hunk headers count lines, and an entry may have several.
	aLine, bLine := lineStarts(a), lineStarts(b)

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
	for i := 0; i < len(edits); {
		if edits[i].op == opEqual {
			i++
			continue
		}
		// A hunk: from context before the first change to context
		// after the last change that lies within 2*context of the
		// one before it.
		start := max(0, i-unifiedContext)
		end := i
		for j := i; j < len(edits); j++ {
			if edits[j].op != opEqual {
				end = j + 1
			} else if j-end >= 2*unifiedContext {
				break
			}
		}
		end = min(len(edits), end+unifiedContext)
		writeHunk(&sb, edits[start:end], a, b, aLine, bLine)
		i = end
	}
	return sb.String()
}

// lineStarts returns, for each entry, the number of lines before it, and
// the total at the end.
func lineStarts(es []entry) []int {
	out := make([]int, len(es)+1)
	for i, e := range es {
		out[i+1] = out[i] + len(e)
	}
	return out
}

func writeHunk(sb *strings.Builder, h []edit, a, b []entry, aLine, bLine []int) {
	as, bs := -1, -1
	var an, bn int
	for _, e := range h {
		if e.op != opInsert {
			if as < 0 {
				as = aLine[e.a]
			}
			an += len(a[e.a])
		}
		if e.op != opDelete {
			if bs < 0 {
				bs = bLine[e.b]
			}
			bn += len(b[e.b])
		}
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(as, an), hunkRange(bs, bn))
	for _, e := range h {
		switch e.op {
		case opEqual:
			writeEntry(sb, ' ', b[e.b])
		case opDelete:
			writeEntry(sb, '-', a[e.a])
		case opInsert:
			writeEntry(sb, '+', b[e.b])
		}
	}
}

func writeEntry(sb *strings.Builder, prefix byte, e entry) {
	for _, l := range e {
		sb.WriteByte(prefix)
		sb.WriteString(l.render())
		sb.WriteByte('\n')
	}
}

// hunkRange formats one side's "start,count". A side with no lines in a
// hunk has none at all (context lines belong to both sides), which diff -u
// writes as 0,0.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return "0,0"
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// render formats a listing line for a diff: the address, then the text;
// references are indented under their instruction.
func (l line) render() string {
	if l.ref {
		return fmt.Sprintf("%6x:          %s", l.off, l.text)
	}
	return fmt.Sprintf("%6x:  %s", l.off, l.text)
}
