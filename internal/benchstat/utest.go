package benchstat

import (
	"errors"
	"slices"

	"golang.org/x/perf/benchmath"
)

// A UTest is the result of a two-sided Mann-Whitney U test, run as
// benchstat runs it: golang.org/x/perf/benchmath's AssumeNothing.Compare.
type UTest struct {
	N1, N2 int
	// P is the two-sided p-value: from the exact distribution of U (given
	// the ties) up to 50 values a sample, or 25 when values tie; above,
	// from the normal approximation with tie and continuity corrections.
	P float64
	// Alpha is the level the warnings judge P against.
	Alpha float64
	// Warnings are benchmath's: too few values to reach Alpha however the
	// samples differ, or every value equal.
	Warnings []string
}

// errEmptySample is returned when a test needs values it was not given.
var errEmptySample = errors.New("empty sample")

// MannWhitney runs a two-sided Mann-Whitney U test on x and y; alpha (0
// means 0.05) is the level its warnings speak of.
func MannWhitney(x, y []float64, alpha float64) (UTest, error) {
	if alpha == 0 {
		alpha = defaultAlpha
	}
	if len(x) == 0 || len(y) == 0 {
		return UTest{N1: len(x), N2: len(y), P: 1, Alpha: alpha}, errEmptySample
	}
	th := benchmath.DefaultThresholds
	th.CompareAlpha = alpha
	// NewSample sorts in place: the caller's values keep their pass order.
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(x), &th), benchmath.NewSample(slices.Clone(y), &th))
	t := UTest{N1: c.N1, N2: c.N2, P: c.P, Alpha: c.Alpha}
	for _, w := range c.Warnings {
		t.Warnings = append(t.Warnings, w.Error())
	}
	return t, nil
}
