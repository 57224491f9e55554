package report

import (
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// HistoryEntry is the results as the sticky comment's list of earlier
// runs will show them once a later run replaces the comment: the head
// validated, the verdict, and per target the CPU cost of statistics in
// base and head with its interval. The run's stamp is the comment's.
// nil when the results name no head commit.
func HistoryEntry(rs []*results.Result, expect []string) *github.HistoryEntry {
	head := ""
	for _, res := range results.SortedResults(rs) {
		if head = res.ChangeHead(); head != "" {
			break
		}
	}
	if head == "" {
		return nil
	}
	e := &github.HistoryEntry{Head: head, Verdict: string(results.Expecting(rs, expect).Status)}
	var costs []string
	for _, t := range results.SortedTargets(rs) {
		if t.Bench == nil {
			continue
		}
		var parts []string
		for _, m := range t.Bench.Measures {
			if m.Name != benchrun.CPUMeasure {
				continue
			}
			for _, s := range []side.Side{side.Base, side.Head} {
				for _, c := range m.Costs {
					if c.Build == s {
						if iv, ok := costInterval(c); ok {
							parts = append(parts, fmt.Sprintf("%s %s", s, iv))
						}
					}
				}
			}
		}
		if len(parts) > 0 {
			costs = append(costs, t.Name+": "+strings.Join(parts, ", "))
		}
	}
	e.Cost = strings.Join(costs, "; ")
	return e
}

// costInterval words a cost of statistics as a relative change with its
// interval, "+1.7% [+0.9%, +2.4%]": the Hodges-Lehmann estimate the
// verdict weighs where it was taken on ratios, else the median ratio.
func costInterval(c benchrun.CostStats) (string, bool) {
	iv := c.HodgesLehmann
	if iv.N == 0 || c.Of == "diff" {
		iv = c.Ratio
	}
	if iv.N == 0 {
		return "", false
	}
	rel := func(x float64) string { return fmt.Sprintf("%+.1f%%", 100*(x-1)) }
	return fmt.Sprintf("%s [%s, %s]", rel(iv.Median), rel(iv.Lo), rel(iv.Hi)), true
}
