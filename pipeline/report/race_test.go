package report

import (
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
	"github.com/patchproof/patchproof/workloads/concurrency"
)

// A crash in the counters' server is told in the section whenever a build
// had one, and in the overview only when head's alone fails the check.
func TestCrashLine(t *testing.T) {
	segv := []string{"Segmentation fault (11)"}
	for _, c := range []struct {
		name       string
		base, head []string
		want       string
		failed     bool
	}{
		{"none", nil, nil, "", false},
		{"head alone", nil, segv, "❌ head's PHP crashed in Apache's child (Segmentation fault (11)) where base's did not", true},
		{"both", segv, segv, "⚠ PHP crashed in Apache's child: base Segmentation fault (11), head Segmentation fault (11); base's crashed too, so it is not the change's to gate", false},
		{"base alone", segv, nil, "⚠ PHP crashed in Apache's child: base Segmentation fault (11), head none; base's own", false},
	} {
		rr := resultstest.RaceResult(false)
		for _, rc := range rr.Counters {
			rc.Run = &concurrency.Result{ChildSignals: map[side.Side][]string{side.Base: c.base, side.Head: c.head}[rc.Side], ChildSignalsRead: true}
		}
		line, failed := crashLine(rr)
		if line != c.want || failed != c.failed {
			t.Errorf("%s: crashLine = %q, %v; want %q, %v", c.name, line, failed, c.want, c.failed)
		}
		if cell := raceCell(rr); strings.Contains(cell, "crashed") != c.failed {
			t.Errorf("%s: the overview's cell %q", c.name, cell)
		}
		p := &summaryWriter{}
		p.race(rr)
		if c.want != "" && !strings.Contains(p.b.String(), "- "+c.want+"\n") {
			t.Errorf("%s: the section lacks the crash:\n%s", c.name, p.b.String())
		}
	}
	// A side whose counters did not run, or whose log was not read, has
	// nothing to compare.
	rr := resultstest.RaceResult(false)
	rr.Counters = rr.Counters[1:]
	rr.Counters[0].Run = &concurrency.Result{ChildSignals: segv, ChildSignalsRead: true}
	if _, failed := crashLine(rr); failed {
		t.Error("head's crash failed a check that had no base run")
	}
	rr = resultstest.RaceResult(false)
	rr.Counters[0].Run = &concurrency.Result{}
	rr.Counters[1].Run = &concurrency.Result{ChildSignals: segv, ChildSignalsRead: true}
	want := "⚠ PHP crashed in Apache's child: base not known, head Segmentation fault (11); base's log was not read, so it is not gated"
	if line, failed := crashLine(rr); failed || line != want {
		t.Errorf("base's log not read: %q, %v; want %q, not failed", line, failed, want)
	}
}
