package bench

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/side"
)

func TestArmJSON(t *testing.T) {
	in := Pass{Pass: 1, Order: []Arm{{side.Base, true}, {side.Head, false}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"pass":1,"order":["base-on","head-off"]}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	var back Pass
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, back); d != "" {
		t.Errorf("round trip (-wrote +read):\n%s", d)
	}
	if err := json.Unmarshal([]byte(`{"order":["base-maybe"]}`), &back); err == nil {
		t.Error("base-maybe read as an arm")
	}
}

func TestRegressionsAndLockCalls(t *testing.T) {
	r := knownResult(t)
	if got := r.Regressions(); len(got) != 0 {
		t.Errorf("Regressions = %q, want none (head improves every measure)", got)
	}
	base, head, ok := r.LockCalls()
	if !ok || base < 748 || base > 749 || head < 6.3 || head > 6.4 {
		t.Errorf("LockCalls = %v, %v, %v; want about 748 and 6.36", base, head, ok)
	}
	for _, m := range r.Measures {
		m.Verdict = Regressed
	}
	// CPU time and throughput are noisy: they never gate.
	want := []string{"locks", "stats_mutex_locks", "shared_locks", "per_thread_locks", "instructions"}
	if d := cmp.Diff(want, r.Regressions()); d != "" {
		t.Errorf("Regressions (-want +got):\n%s", d)
	}
	if _, _, ok := (&Result{}).LockCalls(); ok {
		t.Error("LockCalls of an empty result is ok")
	}
}
