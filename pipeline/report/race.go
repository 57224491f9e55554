package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/race"
)

// raceCell is the concurrency check in the overview: one line for the
// counters, one for ThreadSanitizer.
func raceCell(rr *results.RaceResult) string {
	lines := []string{countersLine(rr, true)}
	lines = append(lines, tsanLine(rr, true))
	if l, failed := crashLine(rr); failed {
		lines = append(lines, l)
	}
	if len(rr.Errors) > 0 {
		lines = append(lines, statusIcon(results.StatusError)+" "+plural(len(rr.Errors), "error", "errors"))
	}
	return strings.Join(lines, "<br>")
}

// countersLine says whether head's counters stayed exact, with base beside.
func countersLine(rr *results.RaceResult, short bool) string {
	head, base := rr.CountersOf(side.Head), rr.CountersOf(side.Base)
	if head == nil {
		return statusIcon(results.StatusError) + " counters not measured"
	}
	c := head.Check
	var s string
	if c.Exact() {
		s = fmt.Sprintf("%s counters exact under %d threads: %d/%d counters, 0 updates lost in %s requests",
			statusIcon(results.StatusPassed), rr.Threads, c.Counters, c.Counters, thousands(int64(c.Requests)))
		if short {
			s = fmt.Sprintf("%s counters exact (%d/%d, %d threads)", statusIcon(results.StatusPassed), c.Counters, c.Counters, rr.Threads)
		}
	} else {
		s = fmt.Sprintf("%s counters not exact under %d threads: %s off in %s requests (of %d that a request moves), %s short in all",
			statusIcon(results.StatusFailed), rr.Threads, plural(len(c.Off), "counter", "counters"), thousands(int64(c.Requests)), c.Counters, thousands(c.Lost))
		if short {
			s = fmt.Sprintf("%s counters not exact: %s off", statusIcon(results.StatusFailed), plural(len(c.Off), "counter", "counters"))
		}
	}
	if base != nil && !short {
		if base.Check.Exact() {
			s += fmt.Sprintf(" (base %s %d/%d)", statusIcon(results.StatusPassed), base.Check.Counters, base.Check.Counters)
		} else {
			s += fmt.Sprintf(" (base %s %d counters off)", statusIcon(results.StatusError), len(base.Check.Off))
		}
	}
	return s
}

// crashLine says whether PHP crashed in the counters' servers, "" when
// neither build's did; failed when head's did and base's did not.
func crashLine(rr *results.RaceResult) (line string, failed bool) {
	h, hRead := rr.ChildSignals(side.Head)
	b, bRead := rr.ChildSignals(side.Base)
	switch {
	case rr.HeadCrashed():
		return fmt.Sprintf("%s head's PHP crashed in Apache's child (%s) where base's did not", statusIcon(results.StatusFailed), markdown.Text(strings.Join(h, ", "))), true
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
func tsanLine(rr *results.RaceResult, short bool) string {
	t := rr.TSan
	if t == nil {
		return statusIcon(results.StatusError) + " ThreadSanitizer not run"
	}
	d := t.Diff
	both := fmt.Sprintf("%d in both builds", len(d.Both))
	if !d.Clean() {
		s := fmt.Sprintf("%s ThreadSanitizer: %s in the change's code", statusIcon(results.StatusFailed), plural(len(d.New), "new race report", "new race reports"))
		if f := d.New[0].File; f != "" && !short {
			s += " (first in " + markdown.Code(f) + ")"
		}
		return s
	}
	s := fmt.Sprintf("%s ThreadSanitizer: no new race (%s", statusIcon(results.StatusPassed), both)
	if n := len(d.NewElsewhere); n > 0 {
		s += fmt.Sprintf(", %d new outside the change", n)
	}
	return s + ")"
}

// race is the concurrency check's section.
func (p *summaryWriter) race(rr *results.RaceResult) {
	p.f("#### Concurrency\n\n")
	p.f("Apache mpm_event, one process of %d ZTS PHP threads, statistics on: a fixed workload (the same queries on the same rows, over connections of its own) served serially to learn each counter's growth per request, then concurrently.\n\n", rr.Threads)
	p.f("- %s\n", countersLine(rr, false))
	p.f("- %s\n", tsanLine(rr, false))
	if l, _ := crashLine(rr); l != "" {
		p.f("- %s\n", l)
	}
	for _, e := range rr.Errors {
		p.f("- %s %s\n", statusIcon(results.StatusError), markdown.Text(firstLine(e)))
	}
	p.blank()
	for _, c := range rr.Counters {
		if len(c.Check.Off) == 0 {
			continue
		}
		p.f("<details><summary>%s: %s off</summary>\n\n", c.Side, plural(len(c.Check.Off), "counter", "counters"))
		p.f("| counter | per request | expected | got | lost |\n|---|---:|---:|---:|---:|\n")
		for _, o := range c.Check.Off {
			p.f("| %s | %d | %s | %s | %s |\n", markdown.Code(o.Name), o.PerRequest, thousands(o.Expected), thousands(o.Got), thousands(o.Lost))
		}
		p.f("\n</details>\n\n")
	}
	if rr.TSan == nil {
		return
	}
	d := rr.TSan.Diff
	for _, r := range d.New {
		p.f("<details><summary>%s new race: %s</summary>\n\n", statusIcon(results.StatusFailed), markdown.Text(r.Summary))
		p.raceStacks(r)
		p.f("</details>\n\n")
	}
	if len(d.NewElsewhere)+len(d.Both) > 0 {
		p.f("<details><summary>Information: %s outside the change, %s in both builds</summary>\n\n", plural(len(d.NewElsewhere), "new race", "new races"), plural(len(d.Both), "race", "races"))
		for _, r := range append(append([]race.Report{}, d.NewElsewhere...), d.Both...) {
			p.f("- %s\n", markdown.Text(r.Summary))
		}
		p.f("\n</details>\n\n")
	}
}

// raceStacks shows both accesses of a race, the stacks a reviewer needs.
func (p *summaryWriter) raceStacks(r race.Report) {
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
	p.f("%s\n", markdown.CodeBlock("", b.String()))
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
