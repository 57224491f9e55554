package chart

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
)

// Mermaid is c as a fenced Markdown block of a Mermaid xychart-beta chart:
// the chart's x values as categories, one line per series in the SVG's
// colours, and a title that names the series in the order of their lines.
// It reports ErrMissingPoint where a series has no y value at one of the
// chart's x values, because xychart-beta would join its neighbours or
// shift the rest of the line left.
func Mermaid(c Chart) (string, error) {
	p, err := prepare(c)
	if err != nil {
		return "", err
	}
	lines := make([][]string, len(p.Series))
	intervals := false
	for i, s := range p.Series {
		at := make(map[float64]Point, len(s.Points))
		for _, pt := range s.Points {
			at[pt.X] = pt
			intervals = intervals || pt.HasInterval && !math.IsNaN(pt.Y)
		}
		for _, x := range p.xs {
			pt, ok := at[x]
			if !ok || math.IsNaN(pt.Y) {
				return "", fmt.Errorf("mermaid chart %q: series %q has no value at x=%s: %w", c.Title, s.Name, formatX(x), ErrMissingPoint)
			}
			lines[i] = append(lines[i], round2(pt.Y))
		}
	}

	var b strings.Builder
	// The palette makes the lines the colours of the SVG's legend.
	colours := make([]string, len(p.Series))
	for i := range colours {
		colours[i] = colour(i)
	}
	fmt.Fprintf(&b, "---\nconfig:\n  themeVariables:\n    xyChart:\n      plotColorPalette: %q\n---\n", strings.Join(colours, ", "))
	b.WriteString("xychart-beta\n")
	if intervals {
		b.WriteString("    %% The points' intervals are left out: xychart-beta cannot draw them.\n")
	}
	fmt.Fprintf(&b, "    title %s\n", quote(mermaidTitle(p.Title, p.Series)))
	cats := make([]string, len(p.xs))
	for i, x := range p.xs {
		cats[i] = quote(formatX(x))
	}
	b.WriteString("    x-axis ")
	if p.XLabel != "" {
		b.WriteString(quote(p.XLabel) + " ")
	}
	fmt.Fprintf(&b, "[%s]\n", strings.Join(cats, ", "))
	b.WriteString("    y-axis ")
	if p.YLabel != "" {
		b.WriteString(quote(p.YLabel) + " ")
	}
	fmt.Fprintf(&b, "%s --> %s\n", round2(p.y.lo), round2(p.y.hi))
	for _, l := range lines {
		fmt.Fprintf(&b, "    line [%s]\n", strings.Join(l, ", "))
	}
	return markdown.CodeBlock("mermaid", b.String()), nil
}

// mermaidTitle stands in for a legend: "title: base (1st line) vs head
// (2nd line)", or the one series' name.
func mermaidTitle(title string, series []Series) string {
	var names []string
	for i, s := range series {
		if len(series) == 1 {
			names = append(names, s.Name)
			break
		}
		names = append(names, fmt.Sprintf("%s (%s line)", s.Name, ordinal(i+1)))
	}
	legend := strings.Join(names, " vs ")
	switch {
	case title == "":
		return legend
	case legend == "":
		return title
	}
	return title + ": " + legend
}

func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// quote is s as a Mermaid string on one line. Mermaid strings have no
// escape for a double quote, so it becomes a single one.
func quote(s string) string {
	s = strings.NewReplacer(`"`, "'", "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	return `"` + s + `"`
}

// round2 is v to two decimals, without trailing zeros: 0.5, 3, 12.35.
func round2(v float64) string {
	s := strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	if s == "-0" {
		return "0"
	}
	return s
}
