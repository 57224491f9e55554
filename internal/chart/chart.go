// Package chart owns how patchproof draws a measurement against a scaling
// parameter (the CPU cost of mysqlnd's statistics at 1, 2, 4 … 32 PHP
// threads, one line per build): the Chart, Series and Point it is given,
// their validation, the axes' scales, and two renderings of the same chart —
// SVG draws a self-contained SVG image, Mermaid writes a Mermaid xychart-beta
// block that GitHub renders inside Markdown.
//
// The SVG shows everything: a legend, each point's interval as an error bar,
// gaps where a y value is missing, and a dashed zero line when values fall
// on both sides of 0. It needs no fonts, scripts or stylesheets from
// elsewhere, and the same Chart always gives the same bytes.
//
// The Mermaid block shows less, because xychart-beta can: it has no legend,
// so the title names the series in the order their lines are drawn; it has
// no error bars, so intervals are left out (a comment in the block says
// so); and its x axis is a row of evenly spaced categories, which is a log2
// scale for thread counts that double and a distorted one otherwise. Its
// lines take a value for every category and join them all, so a chart with
// a missing point has no Mermaid form: Mermaid reports ErrMissingPoint
// rather than draw a value that was never measured, and the caller shows the
// SVG or a table instead.
//
// Which numbers to plot — medians, their confidence intervals, the
// statistics behind them — is decided by the caller; this package draws
// what it is given.
package chart

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Chart is one chart: a line per series over a shared x axis.
type Chart struct {
	Title  string
	XLabel string // e.g. "PHP threads"; none when empty
	YLabel string // e.g. "CPU cost of statistics, %"; none when empty
	// LogX spaces the x axis by log2(x), so that thread counts 1, 2, 4 … 32
	// are evenly spaced; every x must then be positive.
	LogX   bool
	Series []Series
}

// Series is one line, drawn in the order of its points' x values.
type Series struct {
	Name   string
	Points []Point
}

// Point is one measurement. A NaN Y is a missing measurement: the SVG leaves
// a gap there. Lo and Hi are its interval (a confidence interval around a
// median), drawn only when HasInterval is set.
type Point struct {
	X, Y        float64
	Lo, Hi      float64
	HasInterval bool
}

// Errors that validation wraps, for callers that branch on them.
var (
	ErrNoSeries = errors.New("no series")
	ErrNoPoints = errors.New("no points")
	ErrLogX     = errors.New("x must be positive on a log scale")
	ErrBadPoint = errors.New("bad point")
	// ErrMissingPoint is Mermaid's: a series has no y value at an x value
	// that the chart has, and xychart-beta cannot leave a gap.
	ErrMissingPoint = errors.New("xychart-beta cannot leave a gap")
)

// palette is the Okabe–Ito colours, distinct for colour-blind readers too;
// series past the seventh reuse them.
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

func colour(i int) string { return palette[i%len(palette)] }

// plot is a validated Chart: points sorted by x, and the scales both
// renderings share.
type plot struct {
	Chart
	xs []float64 // the distinct x values of all series, ascending
	y  yScale
}

// prepare validates c and works out its scales.
func prepare(c Chart) (*plot, error) {
	if len(c.Series) == 0 {
		return nil, fmt.Errorf("chart %q: %w", c.Title, ErrNoSeries)
	}
	p := &plot{Chart: c}
	p.Series = make([]Series, len(c.Series))
	var ys []float64
	for i, s := range c.Series {
		if len(s.Points) == 0 {
			return nil, fmt.Errorf("chart %q: series %q: %w", c.Title, s.Name, ErrNoPoints)
		}
		pts := slices.Clone(s.Points)
		slices.SortStableFunc(pts, func(a, b Point) int { return cmpFloat(a.X, b.X) })
		for j, pt := range pts {
			if err := checkPoint(pt, c.LogX); err != nil {
				return nil, fmt.Errorf("chart %q: series %q: %w", c.Title, s.Name, err)
			}
			if j > 0 && pts[j-1].X == pt.X {
				return nil, fmt.Errorf("chart %q: series %q: two points at x=%s: %w", c.Title, s.Name, formatX(pt.X), ErrBadPoint)
			}
			p.xs = append(p.xs, pt.X)
			if math.IsNaN(pt.Y) {
				continue
			}
			ys = append(ys, pt.Y)
			if pt.HasInterval {
				ys = append(ys, pt.Lo, pt.Hi)
			}
		}
		p.Series[i] = Series{Name: s.Name, Points: pts}
	}
	if len(ys) == 0 {
		return nil, fmt.Errorf("chart %q: no point has a y value: %w", c.Title, ErrNoPoints)
	}
	slices.Sort(p.xs)
	p.xs = slices.Compact(p.xs)
	p.y = niceScale(slices.Min(ys), slices.Max(ys))
	return p, nil
}

func checkPoint(pt Point, logX bool) error {
	x := formatX(pt.X)
	switch {
	case math.IsNaN(pt.X) || math.IsInf(pt.X, 0):
		return fmt.Errorf("x=%s: %w", x, ErrBadPoint)
	case logX && pt.X <= 0:
		return fmt.Errorf("x=%s: %w", x, ErrLogX)
	case math.IsInf(pt.Y, 0):
		return fmt.Errorf("x=%s: y=%v: %w", x, pt.Y, ErrBadPoint)
	case !pt.HasInterval || math.IsNaN(pt.Y):
		return nil
	case !finite(pt.Lo) || !finite(pt.Hi) || pt.Lo > pt.Hi:
		return fmt.Errorf("x=%s: interval [%v, %v]: %w", x, pt.Lo, pt.Hi, ErrBadPoint)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// formatX is an x value as a tick label or category: 16, 0.5, 1e+06.
func formatX(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// yScale is the y axis: from lo to hi in ticks step apart, labelled with
// decimals digits after the point.
type yScale struct {
	lo, hi, step float64
	n            int // ticks: lo + i*step for i in [0, n]
	decimals     int
}

// maxIntervals is the most gaps between y ticks: enough to read values off
// a 640×360 chart, few enough that labels stay apart.
const maxIntervals = 7

// niceScale is a y axis for values from min to max that includes 0, with a
// step of 1, 2 or 5 times a power of ten.
func niceScale(min, max float64) yScale {
	min, max = math.Min(min, 0), math.Max(max, 0)
	if min == max {
		max = 1
	}
	// The epsilon keeps 0.3/0.1 = 3.0000000000000004 from adding a tick.
	const eps = 1e-9
	mag := math.Pow(10, math.Floor(math.Log10((max-min)/maxIntervals)))
	var s yScale
	for _, m := range []float64{1, 2, 5, 10} {
		s.step = m * mag
		lo, hi := math.Floor(min/s.step+eps), math.Ceil(max/s.step-eps)
		s.n = int(hi - lo)
		s.lo, s.hi = lo*s.step, hi*s.step
		if s.n <= maxIntervals {
			break
		}
	}
	if s.step < 1 {
		s.decimals = int(math.Ceil(-math.Log10(s.step) - eps))
	}
	return s
}

// tick is the i'th tick's value.
func (s yScale) tick(i int) float64 { return s.lo + float64(i)*s.step }

// label is v as a tick label, with the scale's decimals.
func (s yScale) label(v float64) string {
	l := strconv.FormatFloat(v, 'f', s.decimals, 64)
	if negativeZero(l) {
		return l[1:]
	}
	return l
}

// negativeZero reports a negative zero such as "-0" or "-0.00".
func negativeZero(l string) bool {
	if len(l) < 2 || l[0] != '-' {
		return false
	}
	for _, r := range l[1:] {
		if r != '0' && r != '.' {
			return false
		}
	}
	return true
}
