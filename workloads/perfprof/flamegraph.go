package perfprof

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// The flame graph's geometry, flamegraph.pl's defaults.
const (
	fgWidth       = 1200.0
	fgFrameHeight = 16.0
	fgFontSize    = 12.0
	fgFontWidth   = 0.59 // of the font size, Verdana's average
	fgPadX        = 10.0
	fgPadTop      = fgFontSize*3 + 8 // title and legend
	fgPadBottom   = fgFontSize + 8
	// fgMinWidth leaves out frames too narrow to see (pixels): a profile of
	// a PHP server has thousands, and the SVG would be megabytes of
	// nothing.
	fgMinWidth = 0.1
)

// node is a frame of the merged call tree.
type node struct {
	name     string // folded name
	frame    Frame
	count    int
	children map[string]*node
}

func (n *node) child(name string, f Frame) *node {
	c := n.children[name]
	if c == nil {
		c = &node{name: name, frame: f, children: map[string]*node{}}
		n.children[name] = c
	}
	return c
}

func (n *node) sorted() []*node {
	cs := make([]*node, 0, len(n.children))
	for _, c := range n.children {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	return cs
}

// WriteFlamegraph writes s as a self-contained SVG flame graph: a
// rectangle per frame of the merged call tree, the root ("all") at the
// bottom, its width in proportion to the frame's samples, children in
// order of name as flamegraph.pl sorts them (so that widths, not time
// order, carry the meaning), and the frame's name, samples and share in
// a <title> that browsers show on hover. Colours come from a hash of the
// name, so that the same stacks give the same bytes: user code red to
// yellow, the kernel orange, lock functions blue.
func WriteFlamegraph(w io.Writer, s *Stacks, title string) error {
	root := &node{name: "all", children: map[string]*node{}}
	depth := 0
	for _, st := range s.Stacks {
		root.count += st.Count
		n := root.child(st.Comm, Frame{Name: st.Comm})
		n.count += st.Count
		for _, f := range st.Frames {
			n = n.child(f.Folded(), f)
			n.count += st.Count
		}
		depth = max(depth, len(st.Frames)+2)
	}
	height := fgPadTop + float64(max(depth, 1))*fgFrameHeight + fgPadBottom
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%s" height="%s" viewBox="0 0 %s %s" xmlns="http://www.w3.org/2000/svg">
<rect x="0" y="0" width="100%%" height="100%%" fill="#f8f8f8"/>
<text x="%s" y="%s" text-anchor="middle" font-family="Verdana" font-size="%s">%s</text>
<text x="%s" y="%s" font-family="Verdana" font-size="%s" fill="#555">%d samples; red to yellow: user code, orange: kernel, blue: locks; hover for counts</text>
`, num(fgWidth), num(height), num(fgWidth), num(height),
		num(fgWidth/2), num(fgFontSize*1.5+2), num(fgFontSize+5), escape(title),
		num(fgPadX), num(fgFontSize*3+2), num(fgFontSize-1), s.Samples)
	if root.count > 0 {
		perSample := (fgWidth - 2*fgPadX) / float64(root.count)
		var draw func(n *node, x float64, level int)
		draw = func(n *node, x float64, level int) {
			width := float64(n.count) * perSample
			if width < fgMinWidth {
				return
			}
			y := height - fgPadBottom - float64(level+1)*fgFrameHeight
			fmt.Fprintf(bw, `<g><title>%s (%d samples, %.2f%%)</title><rect x="%s" y="%s" width="%s" height="%s" fill="%s" rx="2" ry="2"/>`,
				escape(n.name), n.count, 100*float64(n.count)/float64(root.count),
				num(x), num(y), num(width), num(fgFrameHeight-1), colour(n, level))
			if label := fit(n.name, width); label != "" {
				fmt.Fprintf(bw, `<text x="%s" y="%s" font-family="Verdana" font-size="%s">%s</text>`,
					num(x+3), num(y+fgFrameHeight-5), num(fgFontSize), escape(label))
			}
			bw.WriteString("</g>\n")
			for _, c := range n.sorted() {
				draw(c, x, level+1)
				x += float64(c.count) * perSample
			}
		}
		draw(root, fgPadX, 0)
	}
	bw.WriteString("</svg>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write flame graph: %w", err)
	}
	return nil
}

// fit is as much of name as fits width pixels, ".." marking a cut, or ""
// where not even three characters do.
func fit(name string, width float64) string {
	chars := int((width - 3) / (fgFontSize * fgFontWidth))
	if chars < 3 {
		return ""
	}
	if utf8.RuneCountInString(name) <= chars {
		return name
	}
	r := []rune(name)
	return string(r[:chars-2]) + ".."
}

// colour is the frame's fill: flamegraph.pl's palettes, picked by a hash
// of the name rather than at random so that output is reproducible.
func colour(n *node, level int) string {
	if level <= 1 { // "all" and the command names
		return "rgb(200,200,200)"
	}
	h := fnv.New64a()
	h.Write([]byte(n.frame.Name))
	v := h.Sum64()
	v1, v2, v3 := float64(v&0xff)/255, float64(v>>8&0xff)/255, float64(v>>16&0xff)/255
	switch {
	case isLock(n.frame):
		return fmt.Sprintf("rgb(%d,%d,%d)", int(80+60*v1), int(120+60*v2), int(200+55*v3))
	case n.frame.Kernel:
		return fmt.Sprintf("rgb(%d,%d,%d)", int(230+25*v1), int(140+50*v2), int(40*v3))
	default:
		return fmt.Sprintf("rgb(%d,%d,%d)", int(205+50*v3), int(230*v1), int(55*v2))
	}
}

// num writes a coordinate with two decimals, trailing zeros dropped.
func num(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// escape makes s XML text; characters XML cannot hold become U+FFFD.
func escape(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s)) // a bytes.Buffer does not fail
	return b.String()
}
