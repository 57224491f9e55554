package suites

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Label names the check in the report's tables and its verdict block.
func (*Result) Label() string { return "tests" }

// Question is the reviewer's question the check answers: the second, do
// the tests still pass.
func (*Result) Question() int { return 2 }

// Sections are the target's test-suite section, none where the check did
// not run.
func (r *Result) Sections() []verdict.Section { return verdict.OneSection(r) }

// Artifacts are what the run keeps of the suites: the tests' results as
// JUnit, which the report writes.
func (r *Result) Artifacts() []verdict.Artifact {
	if r == nil {
		return nil
	}
	return []verdict.Artifact{{What: "`junit.xml`"}}
}

// Cell is the test-suite check in the report's verdict block: regressions over
// every variant compared, flakes, and what could not be run.
func (r *Result) Cell() string {
	if r == nil || len(r.Comparisons) == 0 {
		return verdict.Error.Icon() + " not compared"
	}
	regressions, flakes := 0, 0
	var variants []string
	for _, vc := range r.Comparisons {
		regressions += len(vc.Comparison.Regressions)
		flakes += len(vc.Comparison.Flakes)
		variants = append(variants, vc.Variant)
	}
	var s string
	if regressions > 0 {
		s = verdict.Failed.Icon() + " " + count(regressions, "regression", "regressions")
	} else {
		s = verdict.Passed.Icon() + " no regression"
	}
	s += " (" + strings.Join(variants, ", ") + ")"
	if flakes > 0 {
		s += ", " + count(flakes, "flake", "flakes")
	}
	if len(r.Errors) > 0 {
		s += ", " + verdict.Error.Icon() + " " + count(len(r.Errors), "error", "errors")
	}
	return s
}

// WriteSection writes each variant's comparison, base vs head, with the
// counts of the runs compared, then what could not be run and the server
// the suites ran against. Suites that agree are a line in the verdict block:
// their section is folded for whoever wants the tables.
func (r *Result) WriteSection(w io.Writer) error {
	var b strings.Builder
	fold := !r.Regressed() && len(r.Errors) == 0
	if fold {
		fmt.Fprintf(&b, "<details><summary>Test suites: %s</summary>\n\n", r.Cell())
	}
	for _, vc := range r.Comparisons {
		var runs []*RunResult
		for _, run := range r.Runs {
			if run.Build == vc.Comparison.Base || run.Build == vc.Comparison.Head {
				runs = append(runs, run)
			}
		}
		// writeComparison ends its every block with a blank line.
		if err := writeComparison(&b, vc.Comparison, runs); err != nil {
			return err
		}
	}
	if len(r.Comparisons) == 0 {
		b.WriteString("#### Test suites\n\nNot compared: no base and head run of the same variant.\n\n")
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "> [!WARNING]\n> %s\n\n", markdown.Text(e))
	}
	if r.Server != "" {
		fmt.Fprintf(&b, "The suites ran against %s.\n\n", markdown.Text(r.Server))
	}
	if fold {
		b.WriteString("</details>\n\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// count is "1 regression", "2 regressions".
func count(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}

// Answer is the check's answer to the reviewer's question 2, do the tests
// still pass, in one line of the report's verdict block: the regressions
// of the tests run on each build, how many builds, the flakes, and the
// failures both builds share, which are not the change's.
func (r *Result) Answer() string {
	if r == nil || len(r.Comparisons) == 0 {
		return r.Cell()
	}
	regressions, flakes, tests := 0, 0, 0
	// A test that fails on base and head alike is one test, however many
	// variants it fails in (each section counts its own).
	both := map[string]bool{}
	for _, vc := range r.Comparisons {
		regressions += len(vc.Comparison.Regressions)
		flakes += len(vc.Comparison.Flakes)
		for _, ch := range vc.Comparison.UnchangedFailures {
			both[ch.Test] = true
		}
	}
	for _, run := range r.Runs {
		tests = max(tests, run.Counts.Total)
	}
	s := verdict.Passed.Icon() + " no regression"
	if regressions > 0 {
		s = verdict.Failed.Icon() + " " + count(regressions, "regression", "regressions")
	}
	s += fmt.Sprintf(" in %d tests × %d builds", tests, len(r.Runs))
	if flakes > 0 {
		s += ", " + count(flakes, "flake", "flakes")
	}
	if len(both) > 0 {
		s += fmt.Sprintf("; %d fail on both builds (not caused by the change)", len(both))
	}
	if len(r.Errors) > 0 {
		s += ", " + verdict.Error.Icon() + " " + count(len(r.Errors), "error", "errors")
	}
	return s
}

var _ verdict.Check = (*Result)(nil)

// Caveats are none: a regression gates, a flake is in the section.
func (*Result) Caveats() []string { return nil }
