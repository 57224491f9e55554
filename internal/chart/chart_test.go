package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchproof/patchproof/internal/golden"
)

// threads is the chart the benchmark draws: the statistics' CPU cost grows
// with PHP threads before the change and stays flat after it.
func threads() Chart {
	ci := func(x, y, half float64) Point {
		return Point{X: x, Y: y, Lo: y - half, Hi: y + half, HasInterval: true}
	}
	return Chart{
		Title:  "mysqlnd statistics by PHP threads",
		XLabel: "PHP threads",
		YLabel: "CPU cost of statistics, %",
		LogX:   true,
		Series: []Series{
			{Name: "base", Points: []Point{ci(1, 0.5, 0.2), ci(2, 3, 0.4), ci(4, 6, 0.6), ci(8, 9, 0.8), ci(16, 11, 0.9), ci(32, 12, 1.1)}},
			{Name: "head", Points: []Point{ci(1, 0.5, 0.2), ci(2, 0.7, 0.2), ci(4, 0.9, 0.3), ci(8, 1.1, 0.3), ci(16, 1.3, 0.4), ci(32, 1.4, 0.4)}},
		},
	}
}

func line(name string, xy ...float64) Series {
	s := Series{Name: name}
	for i := 0; i+1 < len(xy); i += 2 {
		s.Points = append(s.Points, Point{X: xy[i], Y: xy[i+1]})
	}
	return s
}

func TestGolden(t *testing.T) {
	var b bytes.Buffer
	if err := SVG(&b, threads()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "threads.svg"), b.Bytes())
	m, err := Mermaid(threads())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "threads.md"), []byte(m))
}

// svgDoc is what a test reads back from an SVG.
type svgDoc struct {
	elements map[string]int      // count by element name
	classes  map[string]int      // count by class attribute
	texts    map[string][]string // <text> contents by the class of the <g> or <text> holding them
}

// parseSVG decodes the whole of s as XML.
func parseSVG(t *testing.T, s string) svgDoc {
	t.Helper()
	doc := svgDoc{elements: map[string]int{}, classes: map[string]int{}, texts: map[string][]string{}}
	d := xml.NewDecoder(strings.NewReader(s))
	var stack []string // the class of each open element, inherited when absent
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse as XML: %v\n%s", err, s)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			doc.elements[tok.Name.Local]++
			class := ""
			if len(stack) > 0 {
				class = stack[len(stack)-1]
			}
			for _, a := range tok.Attr {
				if a.Name.Local == "class" {
					class = a.Value
					doc.classes[class]++
				}
			}
			stack = append(stack, class)
			inText = tok.Name.Local == "text" || tok.Name.Local == "title"
			if tok.Name.Local == "title" {
				stack[len(stack)-1] = "svg-title"
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			inText = false
		case xml.CharData:
			if inText {
				class := stack[len(stack)-1]
				doc.texts[class] = append(doc.texts[class], string(tok))
			}
		}
	}
	return doc
}

func TestSVG(t *testing.T) {
	for _, tt := range []struct {
		name                       string
		chart                      Chart
		polylines, intervals, zero int
		// The texts are checked only where set.
		xTicks, yTicks, legend []string
		title                  string
	}{
		{
			name:      "threads",
			chart:     threads(),
			polylines: 2, intervals: 12,
			xTicks: []string{"1", "2", "4", "8", "16", "32"},
			yTicks: []string{"0", "2", "4", "6", "8", "10", "12", "14"},
			legend: []string{"base", "head"},
			title:  "mysqlnd statistics by PHP threads",
		},
		{
			name:      "linear x",
			chart:     Chart{Series: []Series{line("a", 0, 1, 10, 2, 20, 3)}},
			polylines: 1,
			xTicks:    []string{"0", "10", "20"},
			yTicks:    []string{"0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0"},
			legend:    []string{"a"},
		},
		{
			name:      "negative values draw a zero line",
			chart:     Chart{LogX: true, Series: []Series{line("a", 1, -0.4, 2, 0.3), line("b", 1, 0.1, 2, 0.2)}},
			polylines: 2, zero: 1,
			yTicks: []string{"-0.4", "-0.3", "-0.2", "-0.1", "0.0", "0.1", "0.2", "0.3"},
		},
		{
			name:      "a missing y breaks the line",
			chart:     Chart{LogX: true, Series: []Series{line("a", 1, 1, 2, 2, 4, math.NaN(), 8, 3, 16, 4)}},
			polylines: 2,
			xTicks:    []string{"1", "2", "4", "8", "16"},
		},
		{
			name:      "a lone point is a marker",
			chart:     Chart{LogX: true, Series: []Series{line("a", 1, 1, 2, math.NaN(), 4, 3)}},
			polylines: 0,
		},
		{
			name:   "one point",
			chart:  Chart{Series: []Series{line("a", 5, 2)}},
			xTicks: []string{"5"},
			yTicks: []string{"0.0", "0.5", "1.0", "1.5", "2.0"},
		},
		{
			name:      "points out of order and x values of several series",
			chart:     Chart{LogX: true, Series: []Series{line("a", 4, 1, 1, 2), line("b", 2, 1, 8, 1)}},
			polylines: 2,
			xTicks:    []string{"1", "2", "4", "8"},
		},
		{
			name:      "all zero",
			chart:     Chart{Series: []Series{line("a", 1, 0, 2, 0)}},
			polylines: 1,
			yTicks:    []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"},
		},
		{
			name:   "text is escaped",
			chart:  Chart{Title: `<b>&"'`, YLabel: "a<b", Series: []Series{line("x<y & z", 1, 1)}},
			title:  `<b>&"'`,
			legend: []string{"x<y & z"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := SVG(&b, tt.chart); err != nil {
				t.Fatal(err)
			}
			doc := parseSVG(t, b.String())
			for _, external := range []string{"<script", "href", "url(", "@import", "<style"} {
				if strings.Contains(b.String(), external) {
					t.Errorf("SVG holds %q: it must need nothing from elsewhere", external)
				}
			}
			if got := doc.elements["polyline"]; got != tt.polylines {
				t.Errorf("%d polylines, want %d", got, tt.polylines)
			}
			if got := doc.classes["interval"]; got != tt.intervals {
				t.Errorf("%d intervals, want %d", got, tt.intervals)
			}
			if got := doc.classes["zero"]; got != tt.zero {
				t.Errorf("%d zero lines, want %d", got, tt.zero)
			}
			for class, want := range map[string][]string{"x-ticks": tt.xTicks, "y-ticks": tt.yTicks, "legend": tt.legend} {
				if want == nil {
					continue
				}
				if d := cmp.Diff(want, doc.texts[class]); d != "" {
					t.Errorf("%s (-want +got):\n%s", class, d)
				}
			}
			if tt.title != "" {
				if d := cmp.Diff([]string{tt.title}, doc.texts["title"]); d != "" {
					t.Errorf("title (-want +got):\n%s", d)
				}
				if d := cmp.Diff([]string{tt.title}, doc.texts["svg-title"]); d != "" {
					t.Errorf("<title> (-want +got):\n%s", d)
				}
			}
			var again bytes.Buffer
			if err := SVG(&again, tt.chart); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), again.Bytes()) {
				t.Error("two renders of the same chart differ")
			}
		})
	}
}

func TestMermaid(t *testing.T) {
	for _, tt := range []struct {
		name  string
		chart Chart
		want  string
	}{
		{
			name: "values rounded, negatives, no labels",
			chart: Chart{Series: []Series{
				line("a", 1, 1.0/3, 2, -0.456, 3, 2),
				line("b", 1, 0.005, 2, 1, 3, 1.999),
			}},
			want: "```mermaid\n" +
				"---\nconfig:\n  themeVariables:\n    xyChart:\n      plotColorPalette: \"#0072B2, #D55E00\"\n---\n" +
				"xychart-beta\n" +
				"    title \"a (1st line) vs b (2nd line)\"\n" +
				"    x-axis [\"1\", \"2\", \"3\"]\n" +
				"    y-axis -0.5 --> 2\n" +
				"    line [0.33, -0.46, 2]\n" +
				"    line [0.01, 1, 2]\n" +
				"```\n",
		},
		{
			name:  "one series, quotes in text",
			chart: Chart{Title: `say "hi"`, XLabel: "x\ny", YLabel: "%", Series: []Series{line("only", 1, 5)}},
			want: "```mermaid\n" +
				"---\nconfig:\n  themeVariables:\n    xyChart:\n      plotColorPalette: \"#0072B2\"\n---\n" +
				"xychart-beta\n" +
				"    title \"say 'hi': only\"\n" +
				"    x-axis \"x y\" [\"1\"]\n" +
				"    y-axis \"%\" 0 --> 5\n" +
				"    line [5]\n" +
				"```\n",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Mermaid(tt.chart)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestOrdinal(t *testing.T) {
	got := []string{}
	for _, n := range []int{1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111} {
		got = append(got, ordinal(n))
	}
	want := []string{"1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestErrors(t *testing.T) {
	nan := math.NaN()
	for _, tt := range []struct {
		name    string
		chart   Chart
		want    error
		message string
		// mermaidOnly errors come from Mermaid; SVG draws the chart.
		mermaidOnly bool
	}{
		{"no series", Chart{Title: "t"}, ErrNoSeries, `chart "t": no series`, false},
		{"series without points", Chart{Series: []Series{line("a", 1, 1), {Name: "b"}}}, ErrNoPoints, `chart "": series "b": no points`, false},
		{"no y values", Chart{Series: []Series{line("a", 1, nan)}}, ErrNoPoints, `chart "": no point has a y value: no points`, false},
		{"zero x on a log scale", Chart{LogX: true, Series: []Series{line("a", 0, 1, 1, 2)}}, ErrLogX, `chart "": series "a": x=0: x must be positive on a log scale`, false},
		{"negative x on a log scale", Chart{LogX: true, Series: []Series{line("a", 1, 1, -2, 2)}}, ErrLogX, `chart "": series "a": x=-2: x must be positive on a log scale`, false},
		{"NaN x", Chart{Series: []Series{line("a", nan, 1)}}, ErrBadPoint, `chart "": series "a": x=NaN: bad point`, false},
		{"infinite y", Chart{Series: []Series{line("a", 1, math.Inf(1))}}, ErrBadPoint, `chart "": series "a": x=1: y=+Inf: bad point`, false},
		{"two points at one x", Chart{Series: []Series{line("a", 2, 1, 2, 3)}}, ErrBadPoint, `chart "": series "a": two points at x=2: bad point`, false},
		{
			"interval upside down",
			Chart{Series: []Series{{Name: "a", Points: []Point{{X: 1, Y: 1, Lo: 2, Hi: 0, HasInterval: true}}}}},
			ErrBadPoint, `chart "": series "a": x=1: interval [2, 0]: bad point`, false,
		},
		{
			"missing y", Chart{Title: "t", Series: []Series{line("a", 1, 1, 2, nan)}},
			ErrMissingPoint, `mermaid chart "t": series "a" has no value at x=2: xychart-beta cannot leave a gap`, true,
		},
		{
			"missing x", Chart{Title: "t", Series: []Series{line("a", 1, 1, 2, 2), line("b", 1, 1)}},
			ErrMissingPoint, `mermaid chart "t": series "b" has no value at x=2: xychart-beta cannot leave a gap`, true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svgErr := SVG(io.Discard, tt.chart)
			_, mermaidErr := Mermaid(tt.chart)
			if tt.mermaidOnly {
				if svgErr != nil {
					t.Errorf("SVG: %v", svgErr)
				}
			} else if !errors.Is(svgErr, tt.want) || svgErr.Error() != tt.message {
				t.Errorf("SVG: got %v, want %q (%v)", svgErr, tt.message, tt.want)
			}
			if !errors.Is(mermaidErr, tt.want) || mermaidErr.Error() != tt.message {
				t.Errorf("Mermaid: got %v, want %q (%v)", mermaidErr, tt.message, tt.want)
			}
		})
	}
}

func TestNiceScale(t *testing.T) {
	for _, tt := range []struct {
		min, max float64
		want     []string
	}{
		{0.3, 13.1, []string{"0", "2", "4", "6", "8", "10", "12", "14"}},
		{0.3, 1.8, []string{"0.0", "0.5", "1.0", "1.5", "2.0"}},
		{0, 0.3, []string{"0.00", "0.05", "0.10", "0.15", "0.20", "0.25", "0.30"}},
		{-3, 7, []string{"-4", "-2", "0", "2", "4", "6", "8"}},
		{-20, -5, []string{"-20", "-15", "-10", "-5", "0"}},
		{120, 980, []string{"0", "200", "400", "600", "800", "1000"}},
	} {
		s := niceScale(tt.min, tt.max)
		var got []string
		for i := 0; i <= s.n; i++ {
			got = append(got, s.label(s.tick(i)))
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("niceScale(%v, %v) (-want +got):\n%s", tt.min, tt.max, d)
		}
	}
}
