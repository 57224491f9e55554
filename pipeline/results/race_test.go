package results

import (
	"testing"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/workloads/concurrency"
)

// Head's crash in the counters' server is a finding only where base's, run
// the same and its log read, did not crash.
func TestHeadCrashed(t *testing.T) {
	segv := []string{"Segmentation fault (11)"}
	runs := func(base, head []string) *RaceResult {
		return &RaceResult{Counters: []*RaceCounters{
			{Side: side.Base, Run: &concurrency.Result{ChildSignals: base, ChildSignalsRead: true}},
			{Side: side.Head, Run: &concurrency.Result{ChildSignals: head, ChildSignalsRead: true}},
		}}
	}
	for _, c := range []struct {
		name       string
		base, head []string
		fails      bool
	}{{"none", nil, nil, false}, {"head", nil, segv, true}, {"both", segv, segv, false}, {"base", segv, nil, false}} {
		if got := runs(c.base, c.head).HeadCrashed(); got != c.fails {
			t.Errorf("%s: HeadCrashed = %v, want %v", c.name, got, c.fails)
		}
	}
	noBase := runs(nil, segv)
	noBase.Counters = noBase.Counters[1:]
	if noBase.HeadCrashed() {
		t.Error("no base run: a finding, want nothing to compare")
	}
	unread := runs(nil, segv)
	unread.Counters[0].Run.ChildSignalsRead = false
	if unread.HeadCrashed() {
		t.Error("base's log not read: a finding, want nothing to compare")
	}
}
