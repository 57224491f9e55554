package chart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// The SVG's layout, in pixels.
const (
	width, height = 640, 360
	left, right   = 64, width - 16 // the plot area's edges
	top, bottom   = 44, height - 84
	// xPad keeps the first and last points off the plot area's edges.
	xPad = 24
	// charWidth estimates a 13px sans-serif character, to space the legend.
	charWidth = 7
)

// SVG writes c to w as an SVG image of width×height pixels.
func SVG(w io.Writer, c Chart) error {
	p, err := prepare(c)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	p.svg(&b)
	_, err = w.Write(b.Bytes())
	return err
}

func (p *plot) svg(b *bytes.Buffer) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" role="img">`+"\n",
		width, height, width, height)
	fmt.Fprintf(b, "<title>%s</title>\n", esc(p.Title))
	// White, so that the chart reads the same on a dark page.
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	if p.Title != "" {
		fmt.Fprintf(b, `<text class="title" x="%d" y="26" text-anchor="middle" font-size="16" font-weight="bold" fill="#222222">%s</text>`+"\n",
			width/2, esc(p.Title))
	}
	p.yAxis(b)
	p.xAxis(b)
	fmt.Fprintf(b, `<path class="axes" d="M%d %dV%dH%d" fill="none" stroke="#333333"/>`+"\n", left, top, bottom, right)
	for i, s := range p.Series {
		p.series(b, s, colour(i))
	}
	p.legend(b)
	b.WriteString("</svg>\n")
}

func (p *plot) yAxis(b *bytes.Buffer) {
	b.WriteString(`<g class="y-ticks" font-size="12" fill="#333333" text-anchor="end">` + "\n")
	for i := 0; i <= p.y.n; i++ {
		v := p.y.tick(i)
		y := p.yPos(v)
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e5e5e5"/>`+"\n", left, num(y), right, num(y))
		fmt.Fprintf(b, `<text x="%d" y="%s">%s</text>`+"\n", left-6, num(y+4), p.y.label(v))
	}
	b.WriteString("</g>\n")
	if p.y.lo < 0 && 0 < p.y.hi {
		y := num(p.yPos(0))
		fmt.Fprintf(b, `<line class="zero" x1="%d" y1="%s" x2="%d" y2="%s" stroke="#555555" stroke-dasharray="5 4"/>`+"\n", left, y, right, y)
	}
	if p.YLabel != "" {
		mid := (top + bottom) / 2
		fmt.Fprintf(b, `<text class="y-label" x="18" y="%d" transform="rotate(-90 18 %d)" text-anchor="middle" font-size="13" fill="#222222">%s</text>`+"\n",
			mid, mid, esc(p.YLabel))
	}
}

func (p *plot) xAxis(b *bytes.Buffer) {
	b.WriteString(`<g class="x-ticks" font-size="12" fill="#333333" text-anchor="middle">` + "\n")
	for _, x := range p.xs {
		px := num(p.xPos(x))
		fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#333333"/>`+"\n", px, bottom, px, bottom+5)
		fmt.Fprintf(b, `<text x="%s" y="%d">%s</text>`+"\n", px, bottom+19, esc(formatX(x)))
	}
	b.WriteString("</g>\n")
	if p.XLabel != "" {
		fmt.Fprintf(b, `<text class="x-label" x="%d" y="%d" text-anchor="middle" font-size="13" fill="#222222">%s</text>`+"\n",
			(left+right)/2, bottom+40, esc(p.XLabel))
	}
}

// series draws s's error bars, then its line over them, then its markers
// over the line. A missing y breaks the line; a point with no neighbour to
// join is a marker alone.
func (p *plot) series(b *bytes.Buffer, s Series, colour string) {
	fmt.Fprintf(b, `<g class="series" stroke="%s" fill="%s">`+"\n", colour, colour)
	for _, pt := range s.Points {
		if math.IsNaN(pt.Y) || !pt.HasInterval {
			continue
		}
		x, lo, hi := p.xPos(pt.X), num(p.yPos(pt.Lo)), num(p.yPos(pt.Hi))
		fmt.Fprintf(b, `<path class="interval" d="M%s %sV%sM%s %sH%sM%s %sH%s" fill="none" stroke-width="1.5"/>`+"\n",
			num(x), lo, hi, num(x-4), lo, num(x+4), num(x-4), hi, num(x+4))
	}
	var run []Point
	line := func() {
		if len(run) > 1 {
			b.WriteString(`<polyline fill="none" stroke-width="2" stroke-linejoin="round" points="`)
			for i, pt := range run {
				if i > 0 {
					b.WriteByte(' ')
				}
				fmt.Fprintf(b, "%s,%s", num(p.xPos(pt.X)), num(p.yPos(pt.Y)))
			}
			b.WriteString(`"/>` + "\n")
		}
		run = run[:0]
	}
	for _, pt := range s.Points {
		if math.IsNaN(pt.Y) {
			line()
			continue
		}
		run = append(run, pt)
	}
	line()
	for _, pt := range s.Points {
		if !math.IsNaN(pt.Y) {
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.5" stroke="#ffffff"/>`+"\n", num(p.xPos(pt.X)), num(p.yPos(pt.Y)))
		}
	}
	b.WriteString("</g>\n")
}

// legend is a row of entries, centred under the x label.
func (p *plot) legend(b *bytes.Buffer) {
	const swatch, gap = 24, 24 // a line's length; the space between entries
	entry := func(s Series) int { return swatch + 6 + charWidth*utf8.RuneCountInString(s.Name) }
	total := -gap
	for _, s := range p.Series {
		total += entry(s) + gap
	}
	x, y := (left+right-total)/2, height-14
	b.WriteString(`<g class="legend" font-size="13" fill="#222222">` + "\n")
	for i, s := range p.Series {
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", x, y-4, x+swatch, y-4, colour(i))
		fmt.Fprintf(b, `<circle cx="%d" cy="%d" r="3.5" fill="%s" stroke="#ffffff"/>`+"\n", x+swatch/2, y-4, colour(i))
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", x+swatch+6, y, esc(s.Name))
		x += entry(s) + gap
	}
	b.WriteString("</g>\n")
}

// xPos is x's horizontal pixel position.
func (p *plot) xPos(x float64) float64 {
	pos := func(x float64) float64 {
		if p.LogX {
			return math.Log2(x)
		}
		return x
	}
	lo, hi := pos(p.xs[0]), pos(p.xs[len(p.xs)-1])
	if lo == hi {
		return (left + right) / 2
	}
	return left + xPad + (pos(x)-lo)/(hi-lo)*(right-left-2*xPad)
}

// yPos is y's vertical pixel position.
func (p *plot) yPos(y float64) float64 {
	return bottom - (y-p.y.lo)/(p.y.hi-p.y.lo)*(bottom-top)
}

// num is a pixel position to a tenth of a pixel, the same on every machine.
func num(v float64) string {
	s := strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	if s == "-0" {
		return "0"
	}
	return s
}

// esc is s as XML text or an attribute value.
func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s)) // a bytes.Buffer does not fail
	return b.String()
}
