package bench

import (
	"math"
	"strings"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// Judge applies every rule of the benchmark check to r: nil when it
// passes (or did not run), else a *verdict.CheckError naming what
// regressed.
func Judge(r *Result) error {
	if r == nil {
		return nil
	}
	if names := r.regressions(); len(names) > 0 {
		return verdict.CheckFailed("the benchmark regressed: %s", strings.Join(names, ", "))
	}
	return nil
}

// regressions names the measures head regressed, with where and by how
// much ("instructions (statistics off +2.00%)"), and head's crashes when
// they count. A measure regresses where head is worse than base with
// statistics off, with them on, or in the cost of statistics. The noisy
// measures (CPU time, throughput, on a shared machine) inform and are
// left out: they never gate a run; so are the parts of a judged measure
// (shared and per-thread lock calls), which are not judged.
func (r *Result) regressions() []string {
	var names []string
	for _, m := range r.Measures {
		if m.Verdict != verdict.Regressed || m.Noisy {
			continue
		}
		name := m.Name
		if parts := changedParts(m, verdict.Regressed); len(parts) > 0 {
			name += " (" + strings.Join(parts, ", ") + ")"
		}
		names = append(names, name)
	}
	if r.headCrashes() {
		names = append(names, serverCrashes)
	}
	return names
}

// serverCrashes is the regression of a head whose PHP crashed in more of
// its servers than base's.
const serverCrashes = "server crashes"

// headCrashes says whether head's PHP crashed in a larger share of its
// servers than base's: Fisher's exact test, one-sided, p ≤ crashAlpha,
// whether or not base's crashed at all. A crash both builds have now and
// then lands on head alone often enough (one crash of 42 servers is p =
// 0.5) that a single one cannot tell the change's from chance.
func (r *Result) headCrashes() bool {
	base, head := r.CrashesOf(side.Base), r.CrashesOf(side.Head)
	if head == nil || head.Crashed == 0 || base == nil || base.Servers == 0 {
		return false
	}
	return crashesP(base, head) <= crashAlpha
}

// crashAlpha is the p at or below which head's share of crashed servers
// is taken to be larger than base's. Head crashing in every one of its
// servers and base in none passes it from 5 servers each; with 18 each
// and base at none, from 6 of head's.
const crashAlpha = 0.01

// crashesP is the one-sided p of Fisher's exact test that head's servers
// crash more often than base's: the chance, were crashes spread over all
// the servers regardless of build, that head's would have had at least as
// many of them.
func crashesP(base, head *benchrun.ServerCrashes) float64 {
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
