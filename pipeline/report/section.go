package report

import (
	"io"
	"slices"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/verdict"
)

// A Section is one check's part of a target's report: its name in the
// report's tables (Label), its short answer (Cell, the line of the
// verdict block where the check gives no Answer) and its section below.
// Each check's result provides its sections, in its verify package, so
// that what a check finds and how it reads live in one place.
type Section = verdict.Section

// A compactSection can leave its bulk out (the disassembly diffs), for a
// comment that would exceed GitHub's size limit with it.
type compactSection interface {
	WriteCompactSection(w io.Writer) error
}

// A questioned check answers one of the reviewer's five questions (the
// README's), by its number: the first four each have a line of a
// target's verdict block, the fifth, does the change backport, is the
// report's, and a check that answers it adds to that line.
type questioned interface{ Question() int }

// backportQuestion is the question the report answers itself.
const backportQuestion = 5

// An artifacted check tells of files among the run's artifacts.
type artifacted interface{ Artifacts() []verdict.Artifact }

// sectionsOf are a check's sections of its target, in order; none where
// it has nothing to show. The builds are a section of the report's own,
// since a build is no verify package's check.
func sectionsOf(c results.Check) []Section {
	switch r := c.Result.(type) {
	case []*builders.Build:
		if len(r) == 0 {
			return nil
		}
		return []Section{buildsSection(r)}
	case verdict.Check:
		return r.Sections()
	}
	return nil
}

// sections are t's sections, in the order of its checks. A backport that
// did not apply has none: nothing was checked on its branch.
func sections(t results.JobTarget) []Section {
	if t.Backport != nil && !t.Backport.Applied {
		return nil
	}
	var ss []Section
	for _, c := range t.Checks() {
		ss = append(ss, sectionsOf(c)...)
	}
	return ss
}

// question is the number of the question c answers, 0 for none.
func question(c results.Check) int {
	if q, ok := c.Result.(questioned); ok {
		return q.Question()
	}
	return 0
}

// questionOrder lists the indexes of results.TargetResult.Checks in the
// order of the questions they answer, those that answer none last: the
// order in which the verdict block and the artifacts line ask the checks.
func questionOrder() []int {
	checks := (&results.TargetResult{}).Checks()
	order := make([]int, len(checks))
	for i := range order {
		order[i] = i
	}
	rank := func(i int) int {
		if q := question(checks[i]); q > 0 {
			return q
		}
		return backportQuestion + 1
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank(a) - rank(b) })
	return order
}
