package bench

import (
	"encoding/json"
	"math"
	"slices"
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

// A crash of head's PHP in a server gates the run only where base's, run
// as often, never crashed: a crash both have is not the change's.
func TestCrashRegression(t *testing.T) {
	crashes := func(base, head int) *Result {
		return &Result{ServerCrashes: []*ServerCrashes{
			{Build: side.Base, Servers: 18, Crashed: base},
			{Build: side.Head, Servers: 18, Crashed: head},
		}}
	}
	for _, c := range []struct {
		base, head int
		want       bool
	}{
		{0, 0, false}, {0, 1, true}, {18, 18, false}, {3, 0, false},
		// Now and then in base does not hide always in head; a crash
		// more or less is chance.
		{1, 18, true}, {17, 18, false}, {6, 12, false},
	} {
		got := slices.Contains(crashes(c.base, c.head).Regressions(), serverCrashes)
		if got != c.want {
			t.Errorf("base %d, head %d of 18 servers crashed: a regression %v, want %v", c.base, c.head, got, c.want)
		}
	}
	// Fisher's exact test, one-sided: 3 of 3 against 0 of 3 is 1 of the
	// C(6,3) = 20 ways three crashes fall on six servers.
	if p := crashesP(&ServerCrashes{Servers: 3}, &ServerCrashes{Servers: 3, Crashed: 3}); math.Abs(p-0.05) > 1e-12 {
		t.Errorf("crashesP(0 of 3, 3 of 3) = %v, want 1/20", p)
	}
	if p := crashesP(&ServerCrashes{Servers: 18, Crashed: 18}, &ServerCrashes{Servers: 18, Crashed: 18}); math.Abs(p-1) > 1e-12 {
		t.Errorf("crashesP(18 of 18, 18 of 18) = %v, want 1", p)
	}
	headOnly := &Result{ServerCrashes: []*ServerCrashes{{Build: side.Head, Servers: 4, Crashed: 4}}}
	if len(headOnly.Regressions()) != 0 {
		t.Error("head's crashes gate a run that had no base servers to compare with")
	}
}
