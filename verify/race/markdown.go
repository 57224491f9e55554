package race

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Label names the check in the report's tables and its verdict block.
func (*Result) Label() string { return "concurrency" }

// Question is the reviewer's question the check answers: the fourth, is
// it safe under concurrency.
func (*Result) Question() int { return 4 }

// Sections are the target's concurrency section, none where the check
// did not run.
func (r *Result) Sections() []verdict.Section { return verdict.OneSection(r) }

// Artifacts are ThreadSanitizer's reports of each side, where they were
// kept, and the servers' logs.
func (r *Result) Artifacts() []verdict.Artifact {
	if r == nil || r.TSan == nil {
		return nil
	}
	var logs []string
	for _, s := range r.TSan.Sides {
		if s.Log != "" {
			logs = append(logs, markdown.Code(s.Log))
		}
	}
	if len(logs) == 0 {
		return nil
	}
	return []verdict.Artifact{{What: "the ThreadSanitizer reports", Files: logs}, verdict.ServerLogs}
}

// Cell is the check in the report's verdict block: one line for the counters,
// one for ThreadSanitizer, one for a crash that fails head, and how many
// errors kept it from judging.
func (r *Result) Cell() string {
	if r == nil {
		return verdict.Skipped.Icon() + " not run"
	}
	lines := []string{r.countersLine(true)}
	lines = append(lines, r.tsanLine(true))
	if l, failed := r.crashLine(); failed {
		lines = append(lines, l)
	}
	if len(r.Errors) > 0 {
		lines = append(lines, verdict.Error.Icon()+" "+plural(len(r.Errors), "error", "errors"))
	}
	return strings.Join(lines, "<br>")
}

// WriteSection writes the check's section of a target in the report: the
// verdict lines, the counters that were off and the stacks of every new
// race in the change's code.
// opcacheWords is ", OPcache on (SETTINGS)" or ", OPcache off (WHY)", as
// the section's first sentence says it; "" where it was not recorded.
func (r *Result) opcacheWords() string {
	state, why, found := strings.Cut(r.OPcache, ": ")
	if r.OPcache == "" || !found {
		return ""
	}
	return fmt.Sprintf(", OPcache %s (%s)", markdown.Text(state), markdown.Text(why))
}

func (r *Result) WriteSection(w io.Writer) error {
	var b strings.Builder
	f := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	f("#### Concurrency\n\n")
	f("Apache mpm_event, one process of %d ZTS PHP threads, statistics on%s: a fixed workload (the same queries on the same rows, over connections of its own) served serially to learn each counter's growth per request, then concurrently%s.\n\n", r.Threads, r.opcacheWords(), r.memoryPhase())
	f("- %s\n", r.countersLine(false))
	f("- %s\n", r.tsanLine(false))
	if l, _ := r.crashLine(); l != "" {
		f("- %s\n", l)
	}
	for _, e := range r.Errors {
		f("- %s %s\n", verdict.Error.Icon(), markdown.Text(firstLine(e)))
	}
	f("\n")
	for _, c := range r.Counters {
		if len(c.Check.Off) == 0 {
			continue
		}
		f("<details><summary>%s: %d off</summary>\n\n", c.Name(), len(c.Check.Off))
		f("| counter | per request | expected | got | lost |\n|---|---:|---:|---:|---:|\n")
		for _, o := range c.Check.Off {
			lost := thousands(o.Lost)
			if o.Gauge() {
				// A level, not a count: off by, not lost.
				lost = fmt.Sprintf("gauge, off by %+d", o.Got-o.Expected)
			}
			f("| %s | %d | %s | %s | %s |\n", markdown.Code(o.Name), o.PerRequest, thousands(o.Expected), thousands(o.Got), lost)
		}
		f("\n</details>\n\n")
	}
	if head, unmoved := r.CountersOf(side.Head), r.Unmoved(); head != nil && len(unmoved) > 0 {
		what := "no request moved"
		if r.MemoryOf(side.Head) != nil {
			what = "no request of either phase moved"
		}
		f("<details><summary>%d of mysqlnd's %d counters %s: the check says nothing of them</summary>\n\n", len(unmoved), head.Check.Total(), what)
		names := make([]string, len(unmoved))
		for i, n := range unmoved {
			names[i] = markdown.Code(n)
		}
		f("%s\n\n</details>\n\n", strings.Join(names, ", "))
	}
	if r.TSan != nil {
		d := r.TSan.Diff
		for _, rep := range d.New {
			f("<details><summary>%s new race: %s</summary>\n\n", verdict.Failed.Icon(), markdown.Text(rep.Summary))
			f("%s\n", stacks(rep))
			f("</details>\n\n")
		}
		if len(d.NewElsewhere)+len(d.Both) > 0 {
			f("<details><summary>Information: %s outside the change, %s in both builds</summary>\n\n", plural(len(d.NewElsewhere), "new race", "new races"), plural(len(d.Both), "race", "races"))
			for _, rep := range append(append([]Report{}, d.NewElsewhere...), d.Both...) {
				f("- %s\n", markdown.Text(rep.Summary))
			}
			f("\n</details>\n\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// memoryPhase describes the phase with memory statistics on, "" without
// one.
func (r *Result) memoryPhase() string {
	if r.MemoryOf(side.Head) == nil && r.MemoryOf(side.Base) == nil {
		return ""
	}
	return "; then again with mysqlnd.collect_memory_statistics on, whose mem_* counters move on each of mysqlnd's allocations"
}

// countersLine says whether head's counters stayed exact, with base beside.
func (r *Result) countersLine(short bool) string {
	head, base := r.CountersOf(side.Head), r.CountersOf(side.Base)
	if head == nil {
		return verdict.Error.Icon() + " counters not measured"
	}
	c := head.Check
	var s string
	if c.Exact() {
		s = fmt.Sprintf("%s counters exact under %d threads: %d/%d counters (of mysqlnd's %d), 0 updates lost in %s requests%s",
			verdict.Passed.Icon(), r.Threads, c.Counters, c.Counters, c.Total(), thousands(int64(c.Requests)), c.onCPUs())
		if c.OneCPU() {
			s = fmt.Sprintf("%s counters not decided under %d threads: %d/%d exact in %s requests, but %s",
				verdict.Error.Icon(), r.Threads, c.Counters, c.Counters, thousands(int64(c.Requests)), oneCPUText)
		}
		if short {
			s = fmt.Sprintf("%s counters exact (%d/%d, %d threads)", verdict.Passed.Icon(), c.Counters, c.Counters, r.Threads)
			if c.OneCPU() {
				s = fmt.Sprintf("%s counters not decided (1 CPU)", verdict.Error.Icon())
			}
		}
	} else {
		s = fmt.Sprintf("%s counters not exact under %d threads: %s off in %s requests (of %d that a request moves), %s short in all",
			verdict.Failed.Icon(), r.Threads, plural(len(c.Off), "counter", "counters"), thousands(int64(c.Requests)), c.Counters, thousands(c.Lost))
		if short {
			s = fmt.Sprintf("%s counters not exact: %s off", verdict.Failed.Icon(), plural(len(c.Off), "counter", "counters"))
		}
	}
	if base != nil && !short {
		if base.Check.Exact() {
			s += fmt.Sprintf(" (base %s %d/%d)", verdict.Passed.Icon(), base.Check.Counters, base.Check.Counters)
		} else {
			s += fmt.Sprintf(" (base %s %d counters off)", verdict.Error.Icon(), len(base.Check.Off))
		}
	}
	return s + r.memoryLine(short, c.Exact())
}

// memoryLine is what countersLine adds for the phase with memory statistics
// on: "" without one. A head exact without memory statistics and not with
// them fails as well; the short form then says so first.
func (r *Result) memoryLine(short, exactWithout bool) string {
	m := r.MemoryOf(side.Head)
	if m == nil {
		return ""
	}
	c := m.Check
	switch {
	case c.Exact() && short:
		return fmt.Sprintf("; memory statistics %d/%d", c.Counters, c.Counters)
	case c.Exact():
		return fmt.Sprintf("; with memory statistics on %s %d/%d exact in %s requests", verdict.Passed.Icon(), c.Counters, c.Counters, thousands(int64(c.Requests)))
	case short && exactWithout:
		return fmt.Sprintf("; %s with memory statistics on: %s off", verdict.Failed.Icon(), plural(len(c.Off), "counter", "counters"))
	case short:
		return fmt.Sprintf("; with memory statistics on: %s off", plural(len(c.Off), "counter", "counters"))
	}
	return fmt.Sprintf("; with memory statistics on %s %s off in %s requests, %s short in all",
		verdict.Failed.Icon(), plural(len(c.Off), "counter", "counters"), thousands(int64(c.Requests)), thousands(c.Lost))
}

// crashLine says whether PHP crashed in the counters' servers, "" when
// neither build's did; failed when head's did and base's did not.
func (r *Result) crashLine() (line string, failed bool) {
	h, hRead := r.ChildSignals(side.Head)
	b, bRead := r.ChildSignals(side.Base)
	switch {
	case r.HeadCrashed():
		return fmt.Sprintf("%s head's PHP crashed in Apache's child (%s) where base's did not", verdict.Failed.Icon(), markdown.Text(strings.Join(h, ", "))), true
	case len(h) > 0 || len(b) > 0:
		why := "base's crashed too, so it is not the change's to gate"
		switch {
		case len(h) == 0:
			why = "base's own"
		case !bRead:
			why = "base's log was not read, so it is not gated"
		}
		return fmt.Sprintf("⚠ PHP crashed in Apache's child: base %s, head %s; %s", crashes(b, bRead), crashes(h, hRead), why), false
	}
	return "", false
}

// crashes names the signals that ended a server's children, says none did,
// or that its log was not read.
func crashes(signals []string, read bool) string {
	switch {
	case len(signals) > 0:
		return markdown.Text(strings.Join(signals, ", "))
	case read:
		return "none"
	}
	return "not known"
}

// tsanLine says whether head has a data race base has not.
func (r *Result) tsanLine(short bool) string {
	t := r.TSan
	if t == nil {
		return verdict.Error.Icon() + " ThreadSanitizer not run"
	}
	d := t.Diff
	both := fmt.Sprintf("%d in both builds", len(d.Both))
	if !d.Clean() {
		s := fmt.Sprintf("%s ThreadSanitizer: %s in the change's code", verdict.Failed.Icon(), plural(len(d.New), "new race report", "new race reports"))
		if f := d.New[0].File; f != "" && !short {
			s += " (first in " + markdown.Code(f) + ")"
		}
		return s
	}
	s := fmt.Sprintf("%s ThreadSanitizer: no new race (%s", verdict.Passed.Icon(), both)
	if n := len(d.NewElsewhere); n > 0 {
		s += fmt.Sprintf(", %d new outside the change", n)
	}
	return s + ")"
}

// stacks shows both accesses of a race, the stacks a reviewer needs, as a
// code block: the frames are untrusted text, which a fence holds whatever
// it is.
func stacks(r Report) string {
	var b strings.Builder
	for i, a := range r.Accesses {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(a.What + ":\n")
		for j, f := range a.Stack {
			if j == 8 {
				fmt.Fprintf(&b, "    … %d more\n", len(a.Stack)-j)
				break
			}
			fmt.Fprintf(&b, "    #%d %s\n", j, f)
		}
	}
	if r.Location != "" {
		b.WriteString("\n" + r.Location + "\n")
	}
	return markdown.CodeBlock("", b.String())
}

// thousands writes n with thousands separators, as a reader counts.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// firstLine is an error's first line, cut to what a list item shows.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// Caveats are what a reviewer must know of the check though it gates
// nothing: PHP crashing in the counters' servers of both builds, or of
// base's alone.
func (r *Result) Caveats() []string {
	if r == nil {
		return nil
	}
	if l, failed := r.crashLine(); l != "" && !failed {
		return []string{strings.TrimSpace(strings.TrimPrefix(l, "⚠"))}
	}
	return nil
}

var _ verdict.Check = (*Result)(nil)

// Answer is "": the check's Cell is its line under question 4.
func (*Result) Answer() string { return "" }
