package race

import (
	"testing"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/workloads/concurrency"
)

// crashed is a Result whose counters' servers ended with these signals,
// their logs read.
func crashed(base, head []string) *Result {
	return &Result{Counters: []*Counters{
		{Side: side.Base, Run: &concurrency.Result{ChildSignals: base, ChildSignalsRead: true}},
		{Side: side.Head, Run: &concurrency.Result{ChildSignals: head, ChildSignalsRead: true}},
	}}
}

// Head's crash in the counters' server is a finding only where base's, run
// the same and its log read, did not crash.
func TestHeadCrashed(t *testing.T) {
	segv := []string{"Segmentation fault (11)"}
	for _, c := range []struct {
		name       string
		base, head []string
		fails      bool
	}{{"none", nil, nil, false}, {"head", nil, segv, true}, {"both", segv, segv, false}, {"base", segv, nil, false}} {
		t.Run(c.name, func(t *testing.T) {
			if got := crashed(c.base, c.head).HeadCrashed(); got != c.fails {
				t.Errorf("HeadCrashed = %v, want %v", got, c.fails)
			}
		})
	}
	t.Run("no base run", func(t *testing.T) {
		r := crashed(nil, segv)
		r.Counters = r.Counters[1:]
		if r.HeadCrashed() {
			t.Error("a finding, want nothing to compare")
		}
	})
	t.Run("base's log not read", func(t *testing.T) {
		r := crashed(nil, segv)
		r.Counters[0].Run.ChildSignalsRead = false
		if r.HeadCrashed() {
			t.Error("a finding, want nothing to compare")
		}
	})
}
