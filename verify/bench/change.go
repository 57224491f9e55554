package bench

import (
	"fmt"
	"math"

	"github.com/patchproof/patchproof/verify/verdict"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// A part is one comparison of head with base of a measure: with
// statistics off, with them on, or of the cost of statistics.
type part struct {
	what string
	c    *benchrun.Comparison
	cost bool
}

// parts are m's comparisons of head with base, those it has, in the
// order the report shows them.
func parts(m *benchrun.MeasureStats) []part {
	var ps []part
	for _, stats := range []string{"off", "on"} {
		if c := armComparison(m, stats); c != nil {
			ps = append(ps, part{"statistics " + stats, c, false})
		}
	}
	if m.HeadVsBase != nil {
		ps = append(ps, part{"cost of statistics", m.HeadVsBase, true})
	}
	return ps
}

// armComparison is head against base with statistics on or off, nil
// where m has none.
func armComparison(m *benchrun.MeasureStats, stats string) *benchrun.Comparison {
	for i := range m.HeadVsBaseArms {
		if m.HeadVsBaseArms[i].Statistics == stats {
			return &m.HeadVsBaseArms[i].Comparison
		}
	}
	return nil
}

// changedParts names m's comparisons whose verdict is one of vs, each
// with its size: "statistics off +2.00%".
func changedParts(m *benchrun.MeasureStats, vs ...verdict.Change) []string {
	var out []string
	for _, p := range parts(m) {
		for _, v := range vs {
			if p.c.Verdict == v {
				out = append(out, p.what+" "+size(m, p, true))
			}
		}
	}
	return out
}

// size is how much head differs from base in a part: a relative change
// ("+2%"), a difference of lock calls ("+1.2 locks/req", the unit where
// unit says), or for the cost of statistics base's and head's ("+13.9% →
// +1.7%").
func size(m *benchrun.MeasureStats, p part, unit bool) string {
	c := p.c
	u := ""
	if unit {
		u = " " + m.Unit
	}
	if e := c.Exact; e != nil {
		if p.cost {
			if c.Of == "diff" {
				return diffValue(e.Old.Mean) + " → " + diffValue(e.New.Mean) + u
			}
			return ratio(e.Old.Mean) + " → " + ratio(e.New.Mean)
		}
		if e.Allowance > 0 || e.Old.Mean == 0 {
			return diffValue(e.New.Mean-e.Old.Mean) + u
		}
		return change(c.Effect)
	}
	if c.Of != "ratio" {
		return signed(c.Diff.Median)
	}
	if p.cost {
		return ratio(c.Base.Median) + " → " + ratio(c.Head.Median)
	}
	return ratio(c.Ratio.Median)
}

// detectable says what the comparison could have found: "could detect
// ±1.8%", or that it has too few servers to find anything.
func detectable(c *benchrun.Comparison) string {
	if c.Detectable == nil {
		return "too few servers to detect a change"
	}
	return "could detect ±" + percent(*c.Detectable)
}

// compareCell shows head against base in a part for the table: an exact
// measure's difference with the tolerance it is judged by, a noisy one's
// Hodges-Lehmann estimate with its interval, p and what it could detect.
func compareCell(m *benchrun.MeasureStats, p part) string {
	c := p.c
	if c == nil {
		return "–"
	}
	if e := c.Exact; e != nil {
		sz := size(m, p, false)
		tol := "±" + diffValue(e.Tolerance)[1:]
		if e.Allowance == 0 && e.Old.Mean != 0 && c.Of != "diff" {
			tol = "±" + percent(e.Tolerance/math.Abs(e.Old.Mean))
		}
		switch {
		case e.Old == e.New && c.Verdict != verdict.NotJudged:
			return "~ (identical)"
		case c.Verdict == verdict.NotJudged:
			return sz + ", not judged"
		case c.Verdict == verdict.NoChange:
			return "~ " + sz + " (within " + tol + ")"
		}
		return sz + " " + string(c.Verdict) + " (beyond " + tol + ")"
	}
	est := fmt.Sprintf("%s [%s, %s]", ratio(c.Ratio.Median), ratio(c.Ratio.Lo), ratio(c.Ratio.Hi))
	if c.Of != "ratio" {
		est = fmt.Sprintf("%s [%s, %s]", signed(c.Diff.Median), signed(c.Diff.Lo), signed(c.Diff.Hi))
	}
	stat := fmt.Sprintf("p=%.3f%s", c.WilcoxonP, servers(c.Servers))
	switch c.Verdict {
	case verdict.NotJudged:
		return est + " " + stat + ", not judged"
	case verdict.NoChange:
		return "~ " + est + " " + stat + "; " + detectable(c)
	}
	return est + " " + stat + ", " + string(c.Verdict) + "; " + detectable(c)
}

// servers says how many servers a noisy test ran on, when it says more
// than the passes: " n=20 servers".
func servers(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" n=%d %s", n, plural(n, "server", "servers"))
}

// percent shows a share as a percentage to two significant digits: 1.8%,
// 0.52%.
func percent(x float64) string {
	return fmt.Sprintf("%.2g%%", 100*x)
}

// change shows a relative change to three significant digits, signed:
// +2%, -10.9%, -0.13%.
func change(x float64) string {
	return fmt.Sprintf("%+.3g%%", 100*x)
}

// diffValue shows a difference to three significant digits, signed, in
// thousands and millions as k and M: +742, +0.0183, -1.2k.
func diffValue(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 1e7:
		return fmt.Sprintf("%+.3gM", x/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%+.3gk", x/1e3)
	}
	return fmt.Sprintf("%+.3g", x)
}
