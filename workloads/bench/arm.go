package bench

import (
	"fmt"
	"math"
	"strings"

	"github.com/patchproof/patchproof/internal/side"
)

// An Arm is one build (a side) with mysqlnd's statistics on or off.
// results.json, bench.txt's pass orders and the report spell it
// "base-on", "base-off", "head-on", "head-off".
type Arm struct {
	Side       side.Side
	Statistics bool
}

func (a Arm) String() string { return string(a.Side) + "-" + onOff(a.Statistics) }

// MarshalText spells a as String does.
func (a Arm) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (a *Arm) UnmarshalText(b []byte) error {
	s, stats, ok := strings.Cut(string(b), "-")
	if !ok || (s != string(side.Base) && s != string(side.Head)) || (stats != "on" && stats != "off") {
		return fmt.Errorf("arm %q: want base-on, base-off, head-on or head-off", b)
	}
	*a = Arm{Side: side.Side(s), Statistics: stats == "on"}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Verdict is what a comparison of a measure concludes, as results.json
// spells it; "" where nothing was compared (no head build).
type Verdict string

const (
	Improved  Verdict = "improved"
	Regressed Verdict = "regressed"
	NoChange  Verdict = "no significant change"
	// NotJudged is head against base for a measure that explains CPU
	// time (its user and system halves, the context switches, req/s):
	// shown with its interval and p, given no verdict (see breakdown).
	NotJudged Verdict = "not judged"
)

// Regressions names the measures whose cost of statistics is worse in head
// than in base. The noisy ones (CPU time, throughput, on a shared machine)
// inform and are left out: they never gate a run.
func (r *Result) Regressions() []string {
	var names []string
	for _, m := range r.Measures {
		if m.Verdict == Regressed && !m.Noisy {
			names = append(names, m.Name)
		}
	}
	if r.HeadCrashes() {
		names = append(names, serverCrashes)
	}
	return names
}

// serverCrashes is the regression of a head whose PHP crashed in a server
// where base's never did.
const serverCrashes = "server crashes"

// HeadCrashes says whether head's PHP crashed in its servers more than
// base's: in any of them where base's never did, or in a share of them
// that Fisher's exact test says is larger than base's (p ≤ crashAlpha),
// since a crash base has now and then does not hide one head has always.
func (r *Result) HeadCrashes() bool {
	base, head := r.crashesOf(side.Base), r.crashesOf(side.Head)
	if head == nil || head.Crashed == 0 || base == nil || base.Servers == 0 {
		return false
	}
	return base.Crashed == 0 || crashesP(base, head) <= crashAlpha
}

// crashAlpha is the p below which head's share of crashed servers is
// taken to be larger than base's.
const crashAlpha = 0.01

func (r *Result) crashesOf(build side.Side) *ServerCrashes {
	for _, c := range r.ServerCrashes {
		if c.Build == build {
			return c
		}
	}
	return nil
}

// crashesP is the one-sided p of Fisher's exact test that head's servers
// crash more often than base's: the chance, were crashes spread over all
// the servers regardless of build, that head's would have had at least as
// many of them.
func crashesP(base, head *ServerCrashes) float64 {
	n, k := base.Servers+head.Servers, base.Crashed+head.Crashed
	lchoose := func(n, k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return a - b - c
	}
	total := lchoose(n, k)
	p := 0.0
	for x := head.Crashed; x <= min(k, head.Servers); x++ {
		if k-x > base.Servers {
			continue
		}
		p += math.Exp(lchoose(head.Servers, x) + lchoose(base.Servers, k-x) - total)
	}
	return min(p, 1)
}

// lockCalls is the measure of pthread_mutex_lock calls per request;
// cpuMeasure that of CPU time per request.
const (
	lockCalls  = "locks"
	cpuMeasure = "cpu"
)

// LockCalls is the number a reviewer looks for first: pthread_mutex_lock
// calls per request with statistics on, base's median and head's. ok is
// false when locks were not measured or there is no head.
func (r *Result) LockCalls() (base, head float64, ok bool) {
	for _, m := range r.Measures {
		if m.Name != lockCalls {
			continue
		}
		b, okb := m.arm(Arm{side.Base, true})
		h, okh := m.arm(Arm{side.Head, true})
		return b.Median, h.Median, okb && okh
	}
	return 0, 0, false
}
