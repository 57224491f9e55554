package bench

import (
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// Cell sums the benchmark up in the verdict block, one line of Markdown: lock
// calls per request, the number a reviewer looks for first; then each
// judged exact measure's verdict of head against base, with where (with
// statistics off, on, or in their cost) and by how much it changed; CPU
// time's verdict with what the run could detect, not gated; and head's
// crashes.
func (r *Result) Cell() string {
	if r == nil {
		return "not run"
	}
	var parts []string
	if base, head, ok := r.lockCalls(); ok {
		parts = append(parts, fmt.Sprintf("lock calls/req, statistics on: %.4g → %.4g", base, head))
	}
	for _, m := range r.Measures {
		if m.Noisy || m.Verdict == "" || m.Verdict == verdict.NotJudged {
			continue
		}
		parts = append(parts, measureLine(m, ""))
	}
	if m := r.cpu(); m != nil && m.Verdict != "" {
		parts = append(parts, measureLine(m, "not gated"))
	}
	if r.headCrashes() {
		parts = append(parts, verdict.Regressed.Icon()+" "+crashesRegressed)
	} else if base, head := r.CrashesOf(side.Base), r.CrashesOf(side.Head); head != nil && head.Crashed > 0 {
		parts = append(parts, crashWarning(base, head))
	}
	if len(parts) == 0 {
		return "base only"
	}
	return strings.Join(parts, "<br>")
}

// measureLine is a measure's line of the cell: "❌ instructions regressed:
// statistics off +2.00%". The words are results.json's, not the table's
// "~": the cell is read without the table's legend. A noisy measure says
// what it could detect; note, when given, ends the line.
func measureLine(m *benchrun.MeasureStats, note string) string {
	name := strings.ReplaceAll(m.Name, "_", " ")
	if m.Name == benchrun.CPUMeasure {
		name = "CPU time"
	}
	line := fmt.Sprintf("%s %s %s", m.Verdict.Icon(), name, string(m.Verdict))
	if ps := changedParts(m, verdict.Regressed, verdict.Improved); len(ps) > 0 {
		line += ": " + strings.Join(ps, ", ")
	}
	if w := widest(m); m.Noisy && w != "" {
		line += "; " + w
	}
	if note != "" {
		line += " (" + note + ")"
	}
	return line
}

// widest is what the least sensitive of m's comparisons of head with base
// could detect, what the run as a whole could; "" without comparisons.
func widest(m *benchrun.MeasureStats) string {
	var worst *benchrun.Comparison
	for _, p := range parts(m) {
		switch {
		case p.c.Detectable == nil:
			return detectable(p.c)
		case worst == nil || *p.c.Detectable > *worst.Detectable:
			worst = p.c
		}
	}
	if worst == nil {
		return ""
	}
	return detectable(worst)
}

// crashWarning says head's PHP crashed, though not more often than base's
// by the rule: a crash is worth a look even when chance could explain it.
func crashWarning(base, head *benchrun.ServerCrashes) string {
	if base == nil || base.Servers == 0 {
		return fmt.Sprintf("%s head's PHP crashed in %d of %d servers (no base servers to compare with, not gated)", verdict.WarningIcon, head.Crashed, head.Servers)
	}
	return fmt.Sprintf("%s head's PHP crashed in %d of %d servers, base's in %d of %d (Fisher's exact test p=%.2g > %v, not gated)",
		verdict.WarningIcon, head.Crashed, head.Servers, base.Crashed, base.Servers, crashesP(base, head), crashAlpha)
}

// cpu is the CPU time measure, nil where it was not taken.
func (r *Result) cpu() *benchrun.MeasureStats {
	for _, m := range r.Measures {
		if m.Name == benchrun.CPUMeasure {
			return m
		}
	}
	return nil
}

// lockCalls is pthread_mutex_lock calls per request with statistics on,
// base's median and head's. ok is false when locks were not measured or
// there is no head.
func (r *Result) lockCalls() (base, head float64, ok bool) {
	for _, m := range r.Measures {
		if m.Name != benchrun.LockCalls {
			continue
		}
		b, okb := m.Arm(benchrun.Arm{Side: side.Base, Statistics: true})
		h, okh := m.Arm(benchrun.Arm{Side: side.Head, Statistics: true})
		return b.Median, h.Median, okb && okh
	}
	return 0, 0, false
}
