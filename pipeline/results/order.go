package results

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// JobTarget is a target of one of several Results, with the Result (the
// job) it came from.
type JobTarget struct {
	*TargetResult
	Job *Result
}

// SortedTargets lists the targets of all results: master first, then
// release branches newest first (PHP-8.5, PHP-8.4, ...), then the rest by
// name; ties keep the order of the results. The order of the files merged
// never changes a report.
func SortedTargets(rs []*Result) []JobTarget {
	var ts []JobTarget
	for _, res := range rs {
		for _, t := range res.Targets {
			ts = append(ts, JobTarget{t, res})
		}
	}
	slices.SortStableFunc(ts, func(a, b JobTarget) int { return compareTargets(a.Name, b.Name) })
	return ts
}

// SortedResults orders Results (jobs) by their first target, as
// SortedTargets orders targets.
func SortedResults(rs []*Result) []*Result {
	first := func(res *Result) string {
		ts := SortedTargets([]*Result{res})
		if len(ts) == 0 {
			return ""
		}
		return ts[0].Name
	}
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b *Result) int { return compareTargets(first(a), first(b)) })
	return out
}

// JobName names a Result among several by its targets: "PHP-8.5+PHP-8.4".
func JobName(res *Result) string {
	var names []string
	for _, t := range SortedTargets([]*Result{res}) {
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return "(no target)"
	}
	return strings.Join(names, "+")
}

func compareTargets(a, b string) int {
	ra, va := targetRank(a)
	rb, vb := targetRank(b)
	if c := cmp.Compare(ra, rb); c != 0 {
		return c
	}
	if c := slices.Compare(vb, va); c != 0 { // newer release first
		return c
	}
	return strings.Compare(a, b)
}

// targetRank puts the development branch first, then release branches
// (with their version), then anything else.
func targetRank(name string) (int, []int) {
	if name == "master" || name == "main" {
		return 0, nil
	}
	if v, ok := strings.CutPrefix(name, "PHP-"); ok {
		var parts []int
		for _, f := range strings.Split(v, ".") {
			n, err := strconv.Atoi(f)
			if err != nil {
				return 2, nil
			}
			parts = append(parts, n)
		}
		return 1, parts
	}
	return 2, nil
}

// Slug is a target's name as a job's artifacts are named by it
// (patchproof-results-SLUG): a branch name with its slashes made
// underscores, which artifact names cannot hold.
func Slug(target string) string { return strings.ReplaceAll(target, "/", "_") }
