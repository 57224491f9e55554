package main

import (
	"bytes"
	"context"
	"os"
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
