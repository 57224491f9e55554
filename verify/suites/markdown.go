package suites

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/markdown"
)

// writeComparison writes one variant's comparison in the test-suite
// section: counts and durations per build and suite, then the regressions with an excerpt of
// their diffs, the flakes, the fixes, the changed skips, the tests that ran
// on one build only and the failures both builds share.
func writeComparison(w io.Writer, c Comparison, runs []*RunResult) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "#### Test suites: %s vs %s\n\n", c.Base, c.Head)
	writeCounts(bw, runs)

	switch n := len(c.Regressions); {
	case n == 0:
		fmt.Fprintf(bw, "**No regression.** %d tests gave the same result on both builds", c.Same)
		if u := len(c.UnchangedFailures); u > 0 {
			fmt.Fprintf(bw, "; %d fail on both builds (not caused by the change)", u)
		}
		fmt.Fprint(bw, ".\n\n")
	default:
		fmt.Fprintf(bw, "**%d %s**%s:\n\n", n, plural(n, "regression", "regressions"), rerunNote(c))
		for _, ch := range c.Regressions {
			writeChangeDetails(bw, c, ch)
		}
	}
	if len(c.Flakes) > 0 {
		fmt.Fprintf(bw, "**%d %s** (results varied across %d re-runs; not counted as regressions):\n\n",
			len(c.Flakes), plural(len(c.Flakes), "flake", "flakes"), c.Reruns)
		fmt.Fprintf(bw, "| test | was | %s runs | %s runs |\n|---|---|---|---|\n", markdown.Text(c.Base), markdown.Text(c.Head))
		for _, ch := range c.Flakes {
			fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", markdown.Code(ch.Test), ch.Kind, runsText(ch.BaseRuns), runsText(ch.HeadRuns))
		}
		fmt.Fprintln(bw)
	}
	writeList(bw, c, "Fixed", c.Fixes)
	writeList(bw, c, "Skipped on one build", c.ChangedSkips)
	writeList(bw, c, "Ran on "+c.Base+" only", c.OnlyBase)
	writeList(bw, c, "Ran on "+c.Head+" only", c.OnlyHead)
	if len(c.UnchangedFailures) > 0 {
		fmt.Fprintf(bw, "<details><summary>%d %s on both builds (not caused by the change)</summary>\n\n",
			len(c.UnchangedFailures), plural(len(c.UnchangedFailures), "failure", "failures"))
		for _, ch := range c.UnchangedFailures {
			if ch.Cause != "" {
				fmt.Fprintf(bw, "- %s: %s on both builds (not caused by the change): %s\n", markdown.Code(ch.Test), bothText(ch.Head), markdown.Text(ch.Cause))
				continue
			}
			fmt.Fprintf(bw, "- %s: %s on both builds (not caused by the change)%s\n", markdown.Code(ch.Test), bothText(ch.Head), reasonText(ch.Reason))
		}
		fmt.Fprint(bw, "\n</details>\n\n")
	}
	return bw.Flush()
}

func writeCounts(w io.Writer, runs []*RunResult) {
	// leak and xleak apart: an expected leak (XLEAK) is a test's own
	// statement, a leak is what a debug build found.
	fmt.Fprintln(w, "| build | suite | pass | fail | skip | xfail | bork | leak | xleak | warn | total | time |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	row := func(build, suite string, c Counts, secs float64) {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s |\n",
			build, suite, c.Pass, c.Fail, c.Skip, c.XFail, c.Bork, c.Leak, c.XLeak, c.Warn, c.Total, duration(secs))
	}
	for _, r := range runs {
		for _, s := range r.Suites {
			row(markdown.Text(r.Build), markdown.Text(s.Suite), s.Counts, s.DurationSeconds)
		}
		if len(r.Suites) > 1 {
			row("**"+markdown.Text(r.Build)+"**", "**all**", r.Counts, r.DurationSeconds)
		}
	}
	fmt.Fprintln(w)
	for _, r := range runs {
		for _, warning := range r.Warnings {
			fmt.Fprintf(w, "> [!WARNING]\n> %s: %s\n\n", markdown.Text(r.Build), markdown.Text(warning))
		}
	}
}

func writeChangeDetails(w io.Writer, c Comparison, ch Change) {
	fmt.Fprintf(w, "<details><summary><code>%s</code>: %s → %s%s</summary>\n\n",
		markdown.HTML(ch.Test), outcomeText(ch.Base), outcomeText(ch.Head), markdown.HTML(runsSummary(c, ch)))
	if ch.Reason != "" {
		fmt.Fprintf(w, "%s\n\n", markdown.Text(ch.Reason))
	}
	if ch.Diff != "" {
		fmt.Fprintf(w, "%s\n", markdown.CodeBlock("diff", ch.Diff))
	}
	fmt.Fprint(w, "</details>\n\n")
}

func writeList(w io.Writer, c Comparison, title string, list []Change) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(w, "**%s** (%d):\n\n", markdown.Text(title), len(list))
	for _, ch := range list {
		fmt.Fprintf(w, "- %s: %s → %s%s%s\n", markdown.Code(ch.Test), outcomeText(ch.Base), outcomeText(ch.Head), runsSummary(c, ch), reasonText(ch.Reason))
	}
	fmt.Fprintln(w)
}

func rerunNote(c Comparison) string {
	if c.Reruns == 0 {
		return " (not re-run)"
	}
	return fmt.Sprintf(" (each confirmed by %d re-runs per build)", c.Reruns)
}

func runsSummary(c Comparison, ch Change) string {
	if len(ch.BaseRuns) == 0 && len(ch.HeadRuns) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s: %s; %s: %s)", c.Base, runsText(ch.BaseRuns), c.Head, runsText(ch.HeadRuns))
}

// runsText shows the outcomes of a test's runs: "pass ×3" when they agree,
// else each in turn.
func runsText(runs []Outcome) string {
	if len(runs) > 1 && uniform(runs) {
		return fmt.Sprintf("%s ×%d", runs[0], len(runs))
	}
	s := make([]string, len(runs))
	for i, o := range runs {
		s[i] = string(o)
	}
	return strings.Join(s, " ")
}

func outcomeText(o Outcome) string {
	if o == "" {
		return "absent"
	}
	return string(o)
}

// bothText is an outcome shared by both builds as a verb: "fails".
func bothText(o Outcome) string {
	if o == Fail {
		return "fails"
	}
	return string(o)
}

func reasonText(r string) string {
	if r == "" {
		return ""
	}
	r = strings.Join(strings.Fields(r), " ")
	if rs := []rune(r); len(rs) > 160 {
		r = string(rs[:160]) + "…"
	}
	return " — " + markdown.Text(r)
}

func duration(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
