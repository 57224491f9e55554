package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestDoctor(t *testing.T) {
	// Nothing on PATH: the compiler and make are missing, and one apt-get
	// line names their packages.
	t.Setenv("PATH", t.TempDir())
	var stdout, stderr bytes.Buffer
	err := patchproof(context.Background(), &stdout, &stderr, []string{"doctor"})
	if err == nil || exitCode(&bytes.Buffer{}, err) != 2 {
		t.Fatalf("doctor with nothing installed = %v, want exit 2", err)
	}
	out := stdout.String()
	i := strings.Index(out, "apt-get install -y --no-install-recommends ")
	if i < 0 {
		t.Fatalf("no apt-get line:\n%s", out)
	}
	line, _, _ := strings.Cut(out[i:], "\n")
	for _, pkg := range []string{" gcc", " make", " wrk", " valgrind", " ccache", " autoconf"} {
		if !strings.Contains(line, pkg) {
			t.Errorf("apt-get line %q lacks%s", line, pkg)
		}
	}
	for _, stage := range []string{"build", "tests", "bench"} {
		if !strings.Contains(out, "\n"+stage+" ") {
			t.Errorf("no %s rows:\n%s", stage, out)
		}
	}
	stdout.Reset()
	patchproof(context.Background(), &stdout, &stderr, []string{"doctor", "--builder", "docker"})
	if !strings.Contains(stdout.String(), "docker.io") || strings.Contains(stdout.String(), "apxs2") {
		t.Errorf("doctor --builder docker should ask for docker.io, not the host build tools:\n%s", stdout.String())
	}
}

// doctor --builder docker checks the engine: none at DOCKER_HOST is a
// missing requirement (exit 2) named on its row; the engine scripts/test
// starts answers, new enough, and the images are listed.
func TestDoctorDockerEngine(t *testing.T) {
	engine := os.Getenv("DOCKER_HOST")
	t.Setenv("DOCKER_HOST", "unix://"+t.TempDir()+"/none.sock")
	var stdout, stderr bytes.Buffer
	err := patchproof(context.Background(), &stdout, &stderr, []string{"doctor", "--builder", "docker"})
	if err == nil || exitCode(&bytes.Buffer{}, err) != 2 || !strings.Contains(stdout.String(), "engine  MISSING  docker engine at unix://") {
		t.Errorf("doctor with no engine: %v\n%s", err, stdout.String())
	}
	if os.Getenv("PATCHPROOF_E2E_DOCKER") == "" {
		return // the engine's own rows are checked where scripts/test started one
	}
	t.Setenv("DOCKER_HOST", engine)
	stdout.Reset()
	patchproof(context.Background(), &stdout, &stderr, []string{"doctor", "--builder", "docker"})
	for _, want := range []string{"engine  ", "ok  Docker ", "image patchproof-build", "image patchproof-serve", "image patchproof-mariadb", "made (patchproof-serve:"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("doctor --builder docker lacks %q:\n%s", want, stdout.String())
		}
	}
}

// doctor --json is the same checks as JSON: the stages selected, what is
// missing and its packages, the machine's checks, and ok.
func TestDoctorJSON(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	cache := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := patchproof(context.Background(), &stdout, &stderr, []string{"doctor", "--json", "--stages", "bench", "--cache", cache})
	if code := exitCode(&bytes.Buffer{}, err); code != 2 {
		t.Fatalf("doctor --json with nothing installed: exit %d, want 2", code)
	}
	var rep doctorReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout.String())
	}
	if rep.OK || rep.Missing == 0 || rep.Builder != "host" || !slices.Equal(rep.Stages, []string{"bench"}) {
		t.Errorf("report %+v: want host, bench only, not ok", rep)
	}
	for _, r := range rep.Requirements {
		if r.Stage != "bench" {
			t.Errorf("a %s requirement with --stages bench", r.Stage)
		}
	}
	if !slices.Contains(rep.Install, "linux-perf") || !slices.Contains(rep.Install, "wrk") {
		t.Errorf("install %q lacks linux-perf and wrk", rep.Install)
	}
	var checks []string
	for _, c := range rep.Host {
		checks = append(checks, c.What)
	}
	if !slices.Equal(checks, []string{"kernel.perf_event_paranoid", "cgroup v2"}) {
		t.Errorf("host checks %q, want the benchmark's", checks)
	}
	// The build's checks: the free disk in the cache.
	stdout.Reset()
	patchproof(context.Background(), &stdout, &stderr, []string{"doctor", "--json", "--stages", "checkout,build", "--cache", cache + "/not/yet"})
	rep = doctorReport{}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Host) != 1 || rep.Host[0].What != "free disk in the cache" ||
		!strings.Contains(rep.Host[0].Status, " free at "+cache+" ") {
		t.Errorf("the build's host checks: %v %+v", err, rep.Host)
	}
	if code := exitCode(&bytes.Buffer{}, patchproof(context.Background(), &stdout, &stderr, []string{"doctor", "--stages", "bogus"})); code != 2 {
		t.Errorf("--stages bogus: exit %d, want 2", code)
	}
}
