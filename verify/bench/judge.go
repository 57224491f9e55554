package bench

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// Target is one target's benchmark, named as the run names the target:
// its Result, and Err, what kept the benchmark from finishing, whose
// Result (what it measured until then, if anything) is shown but not
// judged.
type Target struct {
	Name   string
	Result *Result
	Err    error
}

// Judge applies every rule of the benchmark check to every target. A
// target whose benchmark did not finish makes a plain error, which wins
// over any failure: the check could not judge it. Otherwise every target
// whose head regressed makes one *verdict.CheckError naming, target by
// target, what regressed; nil is a pass. A nil Result is a target the
// check did not run on.
func Judge(targets []Target) error {
	var errs, failed []string
	for _, t := range targets {
		if t.Err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", t.Name, t.Err))
			continue
		}
		var ce *verdict.CheckError
		if errors.As(judge(t.Result), &ce) {
			failed = append(failed, t.Name+": "+ce.Message)
		}
	}
	return verdict.Judged(errs, failed, "")
}

// judge applies the rules to one target's r: nil when it passes (or did
// not run), else a *verdict.CheckError naming what regressed.
func judge(r *Result) error {
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
// its servers than base's, as the check's message names it, and
// crashesRegressed as the report says it.
const (
	serverCrashes    = "server crashes"
	crashesRegressed = "head's PHP crashed in more of its servers than base's"
)

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
