package bench

import (
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/internal/side"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// Cell sums the benchmark up in the overview, one line of Markdown: lock
// calls per request, the number a reviewer looks for first, then each
// exact measure's verdict on head's cost of statistics against base's,
// and head's crashes when they fail the check.
func (r *Result) Cell() string {
	if r == nil {
		return "not run"
	}
	var parts []string
	if base, head, ok := r.lockCalls(); ok {
		parts = append(parts, fmt.Sprintf("lock calls/req, statistics on: %.4g → %.4g", base, head))
	}
	for _, m := range r.Measures {
		if m.Noisy || m.Verdict == "" {
			continue
		}
		// The words results.json has, not the table's "~": the cell is
		// read without the table's legend.
		parts = append(parts, fmt.Sprintf("%s %s %s", m.Verdict.Icon(), strings.ReplaceAll(m.Name, "_", " "), string(m.Verdict)))
	}
	if r.headCrashes() {
		parts = append(parts, "❌ head's PHP crashed in more of its servers than base's")
	}
	if len(parts) == 0 {
		return "base only"
	}
	return strings.Join(parts, "<br>")
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
