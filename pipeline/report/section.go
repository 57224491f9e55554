package report

import (
	"io"

	"github.com/patchproof/patchproof/pipeline/results"
)

// A Section is one check's part of a target's report: its short answer
// (Cell, the line of the verdict block where the check gives no Answer)
// and its section below. Each check's result provides both, in its verify
// package, so that what a check finds and how it reads live in one place.
type Section interface {
	Cell() string
	WriteSection(w io.Writer) error
}

// A compactSection can leave its bulk out (the disassembly diffs), for a
// comment that would exceed GitHub's size limit with it.
type compactSection interface {
	WriteCompactSection(w io.Writer) error
}

// A check is an entry of the report's list: a section of each target,
// under its title, in the list's order.
type check struct {
	title string // the section's heading, and how questions name it
	short string // its name in the "What moved" table
	// of is t's section, nil where t has none (the stage did not run, or
	// the check has nothing to show).
	of func(t results.JobTarget) Section
}

// checks are the report's list. A check that wants a line in the
// reviewer's minute and a section adds itself here.
var checks = []check{
	// Every target is asked whether NTS stayed the same: a nil Result
	// says it was not compared, and why.
	{"NTS machine code", "NTS", func(t results.JobTarget) Section { return t.CodeDiff }},
	{"ZTS machine code (information)", "ZTS", func(t results.JobTarget) Section {
		if t.CodeDiff == nil || t.CodeDiff.ZTS == nil {
			return nil
		}
		return t.CodeDiff.Information()
	}},
	{"ABI", "ABI", func(t results.JobTarget) Section {
		if t.ABI == nil {
			return nil
		}
		return t.ABI
	}},
	{"builds", "builds", func(t results.JobTarget) Section {
		if len(t.Builds) == 0 {
			return nil
		}
		return buildsSection(t.Builds)
	}},
	{"tests", "tests", func(t results.JobTarget) Section {
		if t.Tests == nil {
			return nil
		}
		return t.Tests
	}},
	{"concurrency", "concurrency", func(t results.JobTarget) Section {
		if t.Race == nil {
			return nil
		}
		return t.Race
	}},
	{"cost of statistics, head vs base", "contention", func(t results.JobTarget) Section {
		if t.Bench == nil {
			return nil
		}
		return t.Bench
	}},
}

// A titled section is a target's section with its check's title.
type titled struct {
	title, short string
	Section
}

// sections are t's sections, in the list's order. A backport that did not
// apply has none: nothing was checked on its branch.
func sections(t results.JobTarget) []titled {
	if t.Backport != nil && !t.Backport.Applied {
		return nil
	}
	var ss []titled
	for _, c := range checks {
		if s := c.of(t); s != nil {
			ss = append(ss, titled{c.title, c.short, s})
		}
	}
	return ss
}
