package report

// MERGE: adapters. The race and bench checks are moving into verify/race
// and verify/bench, each result with its own Cell and WriteSection. Until
// they land, these wrap this package's rendering of them; at the merge,
// checks' entries (section.go) return t.Race and t.Bench themselves, and
// this file goes, with race.go and the tests of them (TestBenchCell in
// overview_test.go, race_test.go).

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/workloads/bench"
)

// raceSection is the concurrency check as a Section (MERGE: adapter).
type raceSection struct{ r *results.RaceResult }

func (s raceSection) Cell() string { return raceCell(s.r) }

func (s raceSection) WriteSection(w io.Writer) error {
	return render(w, func(p *summaryWriter) { p.race(s.r) })
}

// benchSection is the contention benchmark as a Section (MERGE: adapter).
type benchSection struct{ r *bench.Result }

func (s benchSection) Cell() string { return benchCell(s.r) }

func (s benchSection) WriteSection(w io.Writer) error {
	if _, err := io.WriteString(w, "#### Contention benchmark\n\n"); err != nil {
		return err
	}
	return s.r.Markdown(w)
}

// benchCell sums the benchmark up: lock calls per request, the number a
// reviewer looks for first, then each exact measure's verdict on head's
// cost of statistics against base's.
func benchCell(b *bench.Result) string {
	if b == nil {
		return "not run"
	}
	var parts []string
	if base, head, ok := b.LockCalls(); ok {
		parts = append(parts, fmt.Sprintf("lock calls/req, statistics on: %.4g → %.4g", base, head))
	}
	for _, m := range b.Measures {
		if m.Noisy || m.Verdict == "" {
			continue
		}
		icon := "➖"
		switch m.Verdict {
		case bench.Improved:
			icon = "✅"
		case bench.Regressed:
			icon = "❌"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", icon, strings.ReplaceAll(m.Name, "_", " "), m.Verdict))
	}
	if b.HeadCrashes() {
		parts = append(parts, "❌ head's PHP crashed in more of its servers than base's")
	}
	if len(parts) == 0 {
		return "base only"
	}
	return strings.Join(parts, "<br>")
}
