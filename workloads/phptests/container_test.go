package phptests

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/docker/dockertest"
	"github.com/patchproof/patchproof/workloads/mysqld"
)

// containerPHP plays the build's php running run-tests.php, in the build
// image, where no real PHP build is at hand: it passes every test it is
// given, as run-tests would write them, and records in the work dir what
// the container let it see and do. A test named slow.phpt sleeps.
const containerPHP = `#!/bin/sh
while [ "$1" != "-W" ]; do shift; done
status=$2
shift 2
{
	bash -c 'exec 3<>"/dev/tcp/$MYSQL_TEST_HOST/$MYSQL_TEST_PORT"' 2>/dev/null && echo "database reachable" || echo "database unreachable"
	timeout 5 bash -c 'exec 3<>/dev/tcp/192.0.2.1/80' 2>/dev/null && echo "outside reachable" || echo "outside unreachable"
	test -S "$MYSQL_TEST_SOCKET" && echo "socket visible" || echo "socket not visible"
	touch "$(dirname "$TEST_PHP_EXECUTABLE")/probe" 2>/dev/null && echo "build writable" || echo "build read-only"
	touch "$TMPDIR/probe" && echo "work dir writable"
	env | grep -qE '^(GITHUB_|GH_|ACTIONS_|RUNNER_)' && echo "CI variables" || echo "no CI variables"
} >"$TMPDIR/../probe.txt"
for a in "$@"; do
	case $a in *slow.phpt) sleep 300 ;; esac
	if [ -d "$a" ]; then
		for f in "$a"/*.phpt; do printf 'PASSED\t%s/%s\n' "$PWD" "$f"; done
	else
		printf 'PASSED\t%s/%s\n' "$PWD" "$a"
	fi
done >"$status"
`

// containerSetup is a database container and a suite executor on a
// network of the test's own.
type containerSetup struct {
	client *client.Client
	server *mysqld.Server
	exec   *Container
}

func setupContainers(t *testing.T) containerSetup {
	t.Helper()
	c := dockertest.Client(t)
	ctx := context.Background()
	imgOpt := dockertest.ImageOptions(t)
	start := time.Now()
	buildImg, err := builders.EnsureBuildImage(ctx, c, imgOpt)
	if err != nil {
		t.Fatal(err)
	}
	dbImg, err := mysqld.EnsureImage(ctx, c, imgOpt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("images ready in %v", time.Since(start).Round(time.Millisecond))
	net := dockertest.Network(t, c)
	start = time.Now()
	s, err := mysqld.Start(t.Context(), mysqld.Options{
		Dir: filepath.Join(t.TempDir(), "db"), Engine: mysqld.EngineDocker,
		Docker: &mysqld.DockerOptions{Client: c, Image: dbImg, Network: net, Labels: dockertest.Labels(t, "db")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	t.Logf("database container ready in %v", time.Since(start).Round(time.Millisecond))
	return containerSetup{client: c, server: s, exec: &Container{Client: c, Image: buildImg, Network: "container:" + s.ContainerID, Labels: dockertest.Labels(t, "tests")}}
}

func (cs containerSetup) db(t *testing.T, name string) mysqld.Conn {
	t.Helper()
	if err := cs.server.CreateDatabase(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	return cs.server.LocalConn().WithDatabase(name)
}

// The suites of a build in a container of the build image: results as
// run-tests wrote them, the database reached at 127.0.0.1 in its network
// namespace (internal: nothing else is reached), the build read-only, no CI variable; inspected while a
// suite runs, the container is labelled, limited and bound as it should be;
// cancelled mid-suite, it is gone.
func TestSuitesInContainer(t *testing.T) {
	cs := setupContainers(t)
	tree := mergeTrees(miniTree, map[string]string{"sapi/cli/php": containerPHP, "ext/mysqli/tests/slow.phpt": "--TEST--\nslow\n"})
	src := writeTree(t, tree)
	php := filepath.Join(src, "sapi/cli/php")
	os.Chmod(php, 0o755)
	for _, v := range []string{"GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "RUNNER_TEMP"} {
		t.Setenv(v, "must-not-leak")
	}
	work := t.TempDir()
	opt := Options{Build: "ctr", PHP: php, SrcDir: src, WorkDir: work, Exec: cs.exec, Suites: []string{"ext/mysqli/tests"}, DB: cs.db(t, "pp_ctr")}
	start := time.Now()
	r, err := Run(t.Context(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a suite in a container in %v", time.Since(start).Round(time.Millisecond))
	if r.Counts.Pass == 0 || r.Counts.Pass != r.Counts.Total {
		t.Errorf("counts %+v: want every test passed", r.Counts)
	}
	probe, err := os.ReadFile(filepath.Join(work, "probe.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"database reachable", "outside unreachable", "socket visible", "build read-only", "work dir writable", "no CI variables"}
	if d := cmp.Diff(want, strings.Split(strings.TrimSpace(string(probe)), "\n")); d != "" {
		t.Errorf("what the suite's container could do (-want +got):\n%s", d)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	slow := opt
	slow.WorkDir, slow.Tests = t.TempDir(), []string{"ext/mysqli/tests/slow.phpt"}
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, slow); done <- err }()
	in := dockertest.WaitRunning(t, cs.client, "tests")
	h := in.HostConfig
	if string(h.NetworkMode) != "container:"+cs.server.ContainerID || len(in.NetworkSettings.Networks) != 0 {
		t.Errorf("network mode %s, networks %v: want only the database's network namespace", h.NetworkMode, in.NetworkSettings.Networks)
	}
	if h.Memory != defaultMemory || h.PidsLimit == nil || *h.PidsLimit != defaultPids || !h.ReadonlyRootfs || !slices.Contains(h.CapDrop, "ALL") {
		t.Errorf("limits and confinement: memory %d pids %v read-only root %v cap drop %v", h.Memory, h.PidsLimit, h.ReadonlyRootfs, h.CapDrop)
	}
	if in.Config.Labels[docker.LabelRole] != "tests" || in.Config.Labels[docker.LabelOwner] == "" {
		t.Errorf("labels %v", in.Config.Labels)
	}
	mounts := map[string]bool{} // path -> writable
	for _, m := range in.Mounts {
		if m.Source != m.Destination {
			t.Errorf("mount %s at %s: want the same path inside", m.Source, m.Destination)
		}
		mounts[m.Destination] = m.RW
	}
	if d := cmp.Diff(map[string]bool{src: false, filepath.Dir(cs.server.Socket): false, slow.WorkDir: true}, mounts); d != "" {
		t.Errorf("mounts, path -> writable (-want +got):\n%s", d)
	}
	for _, kv := range in.Config.Env {
		if !hasAnyPrefix(kv, []string{"PATH=", "HOME=", "NO_INTERACTION=", "TEST_PHP_", "TMPDIR=", "MYSQL_TEST_", "PDO_MYSQL_TEST_"}) {
			t.Errorf("the container's environment has %q", kv)
		}
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled mid-suite: %v, want context.Canceled", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return within 60s of the cancellation")
	}
	for _, s := range dockertest.Containers(t, cs.client) {
		if s.Labels[docker.LabelRole] == "tests" {
			t.Errorf("suite container %s left after the cancellation (%s)", s.ID[:12], s.State)
		}
	}
}

// A real PHP build's tests give, in a container against the database's
// container, what they give on this host against a host server. Among them
// bug72701 and pdo_mysql_exec_load_data, which run only where the server is
// 127.0.0.1 (and sees the client come from there), and mysqli_report_new,
// whose outcome changes with the server's accounts.
func TestRealSuitesInContainer(t *testing.T) {
	src := os.Getenv("PATCHPROOF_NTS_BUILD")
	if src == "" {
		t.Skip("set PATCHPROOF_NTS_BUILD (an NTS build's directory; scripts/test does) to run real tests in a container")
	}
	php := filepath.Join(src, "sapi/cli/php")
	tests := append(slices.Clone(handful), "ext/mysqli/tests/bug72701.phpt", "ext/pdo_mysql/tests/pdo_mysql_exec_load_data.phpt")
	// What a failed login is answered depends on the server's accounts:
	// its outcome is the host's, whatever that is.
	const accountSensitive = "ext/mysqli/tests/mysqli_report_new.phpt"
	cs := setupContainers(t)
	opt := Options{
		Build: "ctr", PHP: php, SrcDir: src, WorkDir: t.TempDir(), Exec: cs.exec,
		Suites: []string{"ext/mysqli/tests", "ext/pdo_mysql/tests"}, Tests: append(slices.Clone(tests), accountSensitive), DB: cs.db(t, "pp_real"),
	}
	start := time.Now()
	inContainer, err := Run(t.Context(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d tests in a container in %v", len(tests)+1, time.Since(start).Round(time.Millisecond))
	want := map[string]Outcome{}
	for _, name := range tests {
		want[name] = Pass
	}
	want["ext/pdo/tests/pdo_022.phpt"] = XFail
	got := outcomes(inContainer)
	delete(got, accountSensitive)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("outcomes in a container (-want +got):\n%s", d)
	}
	if err := Guard(inContainer, GuardOptions{}); err != nil {
		t.Errorf("Guard: %v", err)
	}

	host := startServer(t, "pp_real")
	hostOpt := opt
	hostOpt.Exec, hostOpt.WorkDir, hostOpt.DB = Host{}, t.TempDir(), dbOf(host, "pp_real")
	start = time.Now()
	onHost, err := Run(t.Context(), hostOpt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d tests on this host in %v", len(tests)+1, time.Since(start).Round(time.Millisecond))
	if d := cmp.Diff(outcomes(onHost), outcomes(inContainer)); d != "" {
		t.Errorf("outcomes (-host +container):\n%s", d)
	}
}

// mergeTrees is a and b in one map, b's entries winning.
func mergeTrees(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
