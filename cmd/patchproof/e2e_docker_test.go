package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/hostwatch"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/suites"
	"github.com/patchproof/patchproof/workloads/bench"
)

// dockerResult is the demo's run under --builder docker, which scripts/test
// makes after the host run, into PATCHPROOF_E2E_DOCKER.
func dockerResult(t *testing.T) (*results.Result, string) {
	t.Helper()
	out := os.Getenv("PATCHPROOF_E2E_DOCKER")
	if out == "" {
		t.Skip("PATCHPROOF_E2E_DOCKER is not set: scripts/test runs the demo with --builder docker")
	}
	res, err := results.Read(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return res, out
}

// The demo under --builder docker gives the figures of the host run: every
// stage ran (none "not available"), NTS machine code 490/490, the same
// test outcomes on each build, the counters exact and no new race, the
// lock counts within 1%.
func TestE2EDockerSameFigures(t *testing.T) {
	host, _ := e2eResult(t)
	dock, _ := dockerResult(t)
	for _, st := range dock.Stages {
		if st.Status != results.StatusPassed {
			t.Errorf("docker run: stage %s %s: %s", st.Name, st.Status, st.Message)
		}
	}
	// Side by side, for the record: what confinement costs, stage by stage.
	for _, st := range dock.Stages {
		for _, hs := range host.Stages {
			if hs.Name == st.Name {
				t.Logf("%-9s host %7.1f s   docker %7.1f s", st.Name, float64(hs.DurationMS)/1000, float64(st.DurationMS)/1000)
			}
		}
	}
	h, d := host.Targets[0], dock.Targets[0]
	// scripts/test runs Docker mode with --variants zts: the NTS build is
	// the host run's business (the machine code codediff compares), and
	// ZTS with its ThreadSanitizer builds is everything that runs the
	// code under test where the host could be reached from it.
	hostBuilds := map[string]*builders.Build{}
	for _, b := range h.Builds {
		hostBuilds[b.Label] = b
	}
	for _, b := range d.Builds {
		if b.Executor != "docker" || !strings.HasPrefix(b.Compiler, "docker/") {
			t.Errorf("%s: built by %s (%s), want the Docker builder", b.Label, b.Executor, b.Compiler)
		}
		if b.Variant == builders.NTS {
			t.Errorf("%s: an NTS build in Docker mode, which scripts/test runs with --variants zts", b.Label)
		}
		if hostBuilds[b.Label] == nil {
			t.Errorf("%s: built in Docker mode, not on the host", b.Label)
		}
	}
	if len(d.Builds) != 4 {
		t.Errorf("%d builds in Docker mode, want base and head of zts and tsan", len(d.Builds))
	}

	// The same compiler and flags in a container make the same machine
	// code: ZTS's per-function comparison, base against head, finds the
	// same functions changed in both modes.
	if d.CodeDiff == nil || d.CodeDiff.ZTS == nil || h.CodeDiff == nil || h.CodeDiff.ZTS == nil {
		t.Fatal("no ZTS machine-code comparison")
	}
	if dz, hz := d.CodeDiff.ZTS, h.CodeDiff.ZTS; dz.Compared != hz.Compared || dz.Identical != hz.Identical || dz.Compared == 0 || dz.Identical == dz.Compared {
		t.Errorf("ZTS: %d/%d identical in Docker mode, %d/%d on the host; want the same, and some changed", dz.Identical, dz.Compared, hz.Identical, hz.Compared)
	}

	// The same outcome for every test, but the few that are flaky against
	// MariaDB here (mysqli_report_new, mysqli_pconn_max_links: their
	// outcome varies between the builds of one run and between runs, on
	// the host too): a test that has one outcome on every build in
	// each mode must have the same one in both.
	if d.Tests == nil || h.Tests == nil || len(d.Tests.Runs) != 2 {
		t.Fatalf("tests: %v runs in Docker mode (want base and head ZTS), %v on the host", d.Tests, h.Tests)
	}
	hostRuns := map[string]*suites.RunResult{}
	for _, r := range h.Tests.Runs {
		hostRuns[r.Build] = r
	}
	var hostZTS []*suites.RunResult
	for _, dr := range d.Tests.Runs {
		hr := hostRuns[dr.Build]
		if hr == nil {
			t.Fatalf("%s: suites ran in Docker mode, not on the host", dr.Build)
		}
		hostZTS = append(hostZTS, hr)
		if dr.Counts.Total != hr.Counts.Total {
			t.Errorf("%s: %d tests in Docker mode, %d on the host", dr.Build, dr.Counts.Total, hr.Counts.Total)
		}
	}
	hs, ds := stableOutcomes(hostZTS), stableOutcomes(d.Tests.Runs)
	compared := 0
	for name, o := range ds {
		if ho, ok := hs[name]; ok {
			compared++
			if ho != o {
				t.Errorf("%s: %s on every build in Docker mode, %s on every build on the host", name, o, ho)
			}
		}
	}
	if total := d.Tests.Runs[0].Counts.Total; compared < total-5 {
		t.Errorf("only %d of %d tests had one outcome in both runs: more flakiness than the suites have", compared, total)
	}
	t.Logf("tests: %d of %d with one outcome on every build agree between the modes", compared, d.Tests.Runs[0].Counts.Total)

	// The concurrency check: exact on both sides, as on the host.
	if d.Race == nil || len(d.Race.Counters) != 4 || len(h.Race.Counters) != 4 || d.Race.TSan == nil {
		t.Fatalf("race: %+v, want base and head, memory statistics off and on", d.Race)
	}
	for i, c := range d.Race.Counters {
		hc := h.Race.Counters[i]
		if c.Side != hc.Side || c.Memory != hc.Memory {
			t.Fatalf("counter run %d: %s in Docker mode, %s on the host", i, c.Name(), hc.Name())
		}
		if !c.Check.Exact() || c.Check.Counters != hc.Check.Counters {
			t.Errorf("%s: exact %v, %d counters (host: %d)", c.Name(), c.Check.Exact(), c.Check.Counters, hc.Check.Counters)
		}
	}
	if n := len(d.Race.TSan.Diff.New); n != 0 {
		t.Errorf("ThreadSanitizer: %d new races in Docker mode", n)
	}
	for i, s := range d.Race.TSan.Sides {
		if hs := h.Race.TSan.Sides[i]; len(s.Reports) != len(hs.Reports) {
			t.Errorf("TSan %s: %d reports in Docker mode, %d on the host", s.Side, len(s.Reports), len(hs.Reports))
		}
	}

	// The benchmark's exact measures: the statistics mutex's calls a
	// request the same, and all locks a request within 1%, or within 0.25
	// where an arm takes a handful: the ~6 calls a request of Apache's and
	// libc's own that remain without mysqlnd's vary by a few hundredths
	// between two runs on one host too (6.18 to 6.40 seen).
	if d.Bench == nil || h.Bench == nil {
		t.Fatal("no benchmark in one of the runs")
	}
	if d.Bench.CPUSource != "container-cgroup" {
		t.Errorf("CPU time from %q in Docker mode, want the container's cgroup", d.Bench.CPUSource)
	}
	for i, da := range d.Bench.Arms {
		ha := h.Bench.Arms[i]
		dl, hl := meanLocks(da.Samples), meanLocks(ha.Samples)
		if hl == 0 || math.Abs(dl-hl) > max(0.01*hl, 0.25) {
			t.Errorf("%s: %.2f locks a request in Docker mode, %.2f on the host; want within 1%% (0.25 at least)", da.Name, dl, hl)
		}
		if ds, hs := statsMutex(da.Samples), statsMutex(ha.Samples); ds != hs {
			t.Errorf("%s: %.2f statistics mutex calls a request in Docker mode, %.2f on the host", da.Name, ds, hs)
		}
	}
}

// stableOutcomes are the tests that have one outcome on every run given,
// with it.
func stableOutcomes(runs []*suites.RunResult) map[string]suites.Outcome {
	m := map[string]suites.Outcome{}
	unstable := map[string]bool{}
	for _, r := range runs {
		for _, s := range r.Suites {
			for _, tr := range s.Tests {
				if o, ok := m[tr.Name]; ok && o != tr.Outcome {
					unstable[tr.Name] = true
				}
				m[tr.Name] = tr.Outcome
			}
		}
	}
	for name := range unstable {
		delete(m, name)
	}
	return m
}

// meanLocks is the mean of the samples' lock calls a request.
func meanLocks(ss []*bench.Sample) float64 {
	var sum float64
	n := 0
	for _, s := range ss {
		if s.Locks != nil {
			sum += s.Locks.LocksPerRequest
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// statsMutex is the mean of the counted samples' statistics mutex calls a
// request (0 where the mutex was not locked or not named).
func statsMutex(ss []*bench.Sample) float64 {
	var sum float64
	n := 0
	for _, s := range ss {
		if s.Locks != nil {
			n++
			if s.Locks.StatsMutex != nil {
				sum += s.Locks.StatsMutex.LocksPerRequest
			}
		}
	}
	return sum / float64(max(1, n))
}

// Under --builder docker no process of this host executed code from a
// build: scripts/test watched /proc for the whole Docker-mode run
// (cmd/hostwatch). The watch saw the builds' code run, in containers.
func TestE2EDockerNothingRanOnHost(t *testing.T) {
	_, out := dockerResult(t)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(out), "hostwatch.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r hostwatch.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	t.Log(r.String())
	if r.Samples < 100 {
		t.Errorf("%d samples: the watch did not cover the run", r.Samples)
	}
	for _, f := range r.Host {
		t.Errorf("host process %d (%s) executed %s (%s)", f.PID, f.Exe, f.File, f.How)
	}
	// What it would have caught: the servers loading the builds' module
	// and the suites running the builds' php, in containers.
	if !slices.ContainsFunc(r.Container, func(f hostwatch.Finding) bool { return strings.HasSuffix(f.File, "/libphp.so") }) {
		t.Error("the watch never saw a container's process with libphp.so mapped: it would not see a host's either")
	}
	if !slices.ContainsFunc(r.Container, func(f hostwatch.Finding) bool { return strings.HasSuffix(f.File, "/sapi/cli/php") }) {
		t.Error("the watch never saw a container run a build's php")
	}
}
