package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/docker/dockertest"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
)

// dockerPHP plays a build's php running run-tests.php, and refuses to run
// anywhere but in a container: the tests stage must never run it on this
// host under --builder docker. It passes the tests it is given; with
// SLOW in its directory, it first sleeps.
const dockerPHP = `#!/bin/sh
test -e /.dockerenv || { echo "php ran outside a container" >&2; exit 99; }
while [ "$1" != "-W" ]; do shift; done
status=$2
shift 2
test -e "$(dirname "$0")/SLOW" && sleep 300
for a in "$@"; do
	for f in "$a"/*.phpt; do printf 'PASSED\t%s/%s\n' "$PWD" "$f"; done
done >"$status"
`

// fakeDockerBuild is a successful build whose php is dockerPHP.
func fakeDockerBuild(t *testing.T, s side.Side, slow bool) *builders.Build {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"run-tests.php":              "<?php",
		"sapi/cli/php":               dockerPHP,
		"ext/mysqli/tests/a.phpt":    "--TEST--\na\n",
		"ext/mysqli/tests/b.phpt":    "--TEST--\nb\n",
		"ext/pdo_mysql/tests/c.phpt": "--TEST--\nc\n",
	}
	if slow {
		files["sapi/cli/SLOW"] = ""
	}
	for p, content := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &builders.Build{Label: "PHP-8.2 " + string(s) + "/nts", Side: s, Variant: builders.NTS, OK: true, Dir: dir, PHP: filepath.Join(dir, "sapi/cli/php")}
}

// ownedObjects counts the containers and networks this process owns.
func ownedObjects(t *testing.T, c *client.Client) int {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", docker.LabelOwner+"="+docker.Labels("")[docker.LabelOwner]))
	ctrs, err := c.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	nets, err := c.NetworkList(context.Background(), network.ListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	return len(ctrs) + len(nets)
}

func dockerRun(t *testing.T, slow bool) *Run {
	t.Helper()
	r, _ := newTestRun(t, Config{Builder: builders.KindDocker, Variants: []builders.Variant{builders.NTS}, SuiteJobs: 2, Getenv: os.Getenv})
	r.Cache = dockertest.ImageOptions(t).CacheDir
	r.Targets = []*Target{{Name: "PHP-8.2", Builds: []*builders.Build{fakeDockerBuild(t, side.Base, slow), fakeDockerBuild(t, side.Head, slow)},
		Result: &results.TargetResult{Name: "PHP-8.2"}}}
	return r
}

// Under --builder docker the tests stage runs, with the
// database in a container and every build's suites in containers, and
// leaves nothing behind when the run ends, also when it is cancelled
// mid-suite.
func TestTestsStageInDocker(t *testing.T) {
	c := dockertest.Client(t)
	if n := ownedObjects(t, c); n != 0 {
		t.Fatalf("%d objects of this process before the test", n)
	}

	r := dockerRun(t, false)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r.ctx = ctx
	start := time.Now()
	err := testsStage{}.Run(ctx, r)
	if err != nil {
		t.Fatalf("tests stage: %v", err)
	}
	t.Logf("tests stage in Docker mode in %v", time.Since(start).Round(time.Millisecond))
	tr := r.Targets[0].Result.Tests
	if tr == nil || len(tr.Runs) != 2 || len(tr.Errors) != 0 {
		t.Fatalf("tests result %+v", tr)
	}
	for _, run := range tr.Runs {
		if run.Counts.Total != 3 || run.Counts.Pass != 3 {
			t.Errorf("%s: counts %+v, want 3 passed", run.Build, run.Counts)
		}
	}
	if r.db.server == nil || r.db.server.ContainerID == "" || r.db.server.Host != "mariadb" {
		t.Errorf("the run's database is not the container's: %+v", r.db.server)
	}
	r.closeDatabase()
	r.closeDocker()
	if n := ownedObjects(t, c); n != 0 {
		t.Errorf("%d containers and networks left after the run", n)
	}

	// Cancelled mid-suite: the stage returns the cancellation, and the
	// run's end removes everything.
	r = dockerRun(t, true)
	ctx, cancel = context.WithCancel(t.Context())
	r.ctx = ctx
	done := make(chan error, 1)
	go func() { done <- testsStage{}.Run(ctx, r) }()
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		list, _ := c.ContainerList(context.Background(), container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", docker.LabelRole+"=tests"), filters.Arg("label", docker.LabelOwner+"="+docker.Labels("")[docker.LabelOwner]))})
		if len(list) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no suite container within 120s")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err == nil || !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("cancelled stage: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the stage did not return within 60s of the cancellation")
	}
	r.closeDatabase()
	r.closeDocker()
	if n := ownedObjects(t, c); n != 0 {
		t.Errorf("%d containers and networks left after the cancelled run", n)
	}
}
