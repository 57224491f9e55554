package docker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/docker/dockertest"
)

func baseImage(t *testing.T) string {
	t.Helper()
	c := dockertest.Client(t)
	img, err := docker.EnsureBaseImage(context.Background(), c, dockertest.ImageOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

const path = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

// Run gives the command's exit status and output; a command that cannot
// start is an error; a cancelled one returns at once, and nothing is left.
func TestRun(t *testing.T) {
	c := dockertest.Client(t)
	img := baseImage(t)
	ctx := context.Background()
	spec := docker.Spec{Image: img, Env: []string{path}, Labels: dockertest.Labels(t, "tests")}

	var out bytes.Buffer
	s := spec
	s.Cmd = []string{"sh", "-c", "echo out; echo err >&2; exit 3"}
	code, err := docker.Run(ctx, c, s, &out)
	if err != nil || code != 3 {
		t.Errorf("exit 3: code %d, err %v", code, err)
	}
	if got := out.String(); !strings.Contains(got, "out\n") || !strings.Contains(got, "err\n") {
		t.Errorf("output %q, want both streams", got)
	}

	s.Cmd = []string{"/nonexistent/program"}
	if _, err := docker.Run(ctx, c, s, nil); err == nil {
		t.Error("a missing program: no error")
	}

	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	s.Cmd = []string{"sleep", "300"}
	start := time.Now()
	if _, err := docker.Run(cctx, c, s, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled: err %v, want the context's", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("cancelled sleep returned after %v", d)
	}
	if left := dockertest.Containers(t, c); len(left) > 0 {
		t.Errorf("%d containers left", len(left))
	}
}

// A recipe is built by the engine: what its steps do is in the image, the
// apt sources reach it as they were, a second call finds the image, a
// failing step's output is in the error and leaves no image, and a
// cancelled build returns at once and leaves no step's container.
func TestEnsureImage(t *testing.T) {
	c := dockertest.Client(t)
	ctx := context.Background()
	opt := dockertest.ImageOptions(t)
	var log bytes.Buffer
	opt.Log = &log
	opt.Sources = "deb http://mirror.example/it's bookworm main\n"
	marker := fmt.Sprintf("recipe-%d", time.Now().UnixNano())
	recipe := func(steps string) docker.Recipe {
		return docker.Recipe{Name: "test", Dockerfile: []byte("ARG BASE\nFROM ${BASE}\nARG APT_SOURCES=\n" + steps)}
	}
	removeImage := func(tag string) {
		t.Cleanup(func() {
			c.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true})
		})
	}

	good := recipe(`RUN printf '%s' "$APT_SOURCES" >/sources && echo ` + marker + " >/made\n")
	tag, err := docker.EnsureImage(ctx, c, "patchproof-test", good, opt)
	if err != nil {
		t.Fatalf("%v; log:\n%s", err, log.String())
	}
	removeImage(tag)
	var out bytes.Buffer
	spec := docker.Spec{Image: tag, Env: []string{path}, Cmd: []string{"cat", "/made", "/sources"}, Labels: dockertest.Labels(t, "tests")}
	if code, err := docker.Run(ctx, c, spec, &out); err != nil || code != 0 || out.String() != marker+"\n"+opt.Sources {
		t.Errorf("the image holds %q (exit %d, %v), want the marker and the sources", out.String(), code, err)
	}
	log.Reset()
	if again, err := docker.EnsureImage(ctx, c, "patchproof-test", good, opt); err != nil || again != tag || log.Len() > 0 {
		t.Errorf("a second call: %q, %v, log %q; want %q found, nothing built", again, err, log.String(), tag)
	}

	// The quotes split the text in the step's line, which the stream shows
	// too: what is found is the step's output.
	bad := recipe("RUN echo " + marker + `"-said""-no"; exit 3` + "\n")
	badTag := docker.ImageTag("patchproof-test", bad, opt)
	removeImage(badTag)
	_, err = docker.EnsureImage(ctx, c, "patchproof-test", bad, opt)
	if err == nil || !strings.Contains(err.Error(), marker+"-said-no") || !strings.Contains(err.Error(), "code: 3") {
		t.Errorf("a failing step: %v; want its output and its exit status", err)
	}
	if _, err := c.ImageInspect(ctx, badTag); err == nil {
		t.Errorf("a failed build left %s", badTag)
	}

	slow := recipe("RUN echo " + marker + `"-slee""ping"; sleep 300` + "\n")
	removeImage(docker.ImageTag("patchproof-test", slow, opt))
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opt.Log = cancelOn{marker + "-sleeping", cancel}
	start := time.Now()
	if _, err := docker.EnsureImage(cctx, c, "patchproof-test", slow, opt); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want the context's error", err)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("a cancelled build returned after %v", d)
	}
	// The engine removes the step's container once it sees the request
	// gone: give it a moment.
	var left []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		left = left[:0]
		all, err := c.ContainerList(ctx, container.ListOptions{All: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all {
			if strings.Contains(s.Command, marker) {
				left = append(left, s.ID[:12]+" "+s.State)
			}
		}
		if len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("the cancelled build left its step's containers: %v", left)
	}
}

// cancelOn calls cancel once the output shows text.
type cancelOn struct {
	text   string
	cancel func()
}

func (w cancelOn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(w.text)) {
		w.cancel()
	}
	return len(p), nil
}

// A confined container on an internal network: what the engine was asked
// for is what it runs, it reaches its network's aliases and nothing
// outside, it cannot write its root or its read-only binds, and it is gone
// after a cancellation.
func TestConfinedOnInternalNetwork(t *testing.T) {
	c := dockertest.Client(t)
	img := baseImage(t)
	ctx := context.Background()
	net := dockertest.Network(t, c)
	ro, rw := t.TempDir(), t.TempDir()

	// A peer to be reached by its alias.
	peerCtx, stopPeer := context.WithCancel(ctx)
	defer stopPeer()
	peerDone := make(chan struct{})
	go func() {
		defer close(peerDone)
		docker.Run(peerCtx, c, docker.Spec{Image: img, Cmd: []string{"sleep", "300"}, Env: []string{path}, Network: net, Aliases: []string{"peer"}, Labels: dockertest.Labels(t, "db")}, nil)
	}()
	dockertest.WaitRunning(t, c, "db")

	script := `
getent hosts peer >/dev/null && echo "peer resolves" || echo "peer does not resolve"
timeout 5 bash -c 'exec 3<>/dev/tcp/192.0.2.1/80' 2>/dev/null && echo "outside reachable" || echo "outside unreachable"
touch /etc/probe 2>/dev/null && echo "root writable" || echo "root read-only"
touch "$RO/probe" 2>/dev/null && echo "ro writable" || echo "ro read-only"
touch "$RW/probe" && echo "rw writable"
touch /tmp/probe && echo "tmp writable"
test -z "${GITHUB_TOKEN:-}" && echo "no token"
`
	t.Setenv("GITHUB_TOKEN", "must-not-leak")
	spec := docker.Spec{
		Image: img, Cmd: []string{"bash", "-c", script}, Env: []string{path, "RO=" + ro, "RW=" + rw},
		User:  "65534:65534",
		Binds: []docker.Bind{{Path: ro, ReadOnly: true}, {Path: rw}}, Network: net,
		Labels: dockertest.Labels(t, "tests"), Memory: 256 << 20, Pids: 64, Confined: true,
	}
	// Both writable by anyone: only the bind's mode keeps ro unwritten.
	os.Chmod(rw, 0o777)
	os.Chmod(ro, 0o777)
	var out bytes.Buffer
	code, err := docker.Run(ctx, c, spec, &out)
	if err != nil || code != 0 {
		t.Fatalf("code %d, err %v; output:\n%s", code, err, out.String())
	}
	want := []string{"peer resolves", "outside unreachable", "root read-only", "ro read-only", "rw writable", "tmp writable", "no token"}
	if d := cmp.Diff(want, strings.Split(strings.TrimSpace(out.String()), "\n")); d != "" {
		t.Errorf("what the container could do (-want +got):\n%s", d)
	}

	// Inspected while it runs, it is what the spec said.
	sctx, cancel := context.WithCancel(ctx)
	spec.Cmd = []string{"sleep", "300"}
	spec.Labels = dockertest.Labels(t, "sleeper")
	done := make(chan error, 1)
	go func() { _, err := docker.Run(sctx, c, spec, nil); done <- err }()
	in := dockertest.WaitRunning(t, c, "sleeper")
	if d := cmp.Diff([]string{path, "RO=" + ro, "RW=" + rw}, in.Config.Env); d != "" {
		t.Errorf("environment (-want +got):\n%s", d)
	}
	h := in.HostConfig
	if h.Memory != 256<<20 || h.PidsLimit == nil || *h.PidsLimit != 64 || !h.ReadonlyRootfs || !slices.Contains(h.CapDrop, "ALL") || string(h.NetworkMode) != net {
		t.Errorf("host config: memory %d pids %v read-only root %v cap drop %v network %s", h.Memory, h.PidsLimit, h.ReadonlyRootfs, h.CapDrop, h.NetworkMode)
	}
	if in.Config.Labels[docker.LabelRole] != "sleeper" || in.Config.Labels[docker.LabelOwner] == "" {
		t.Errorf("labels %v", in.Config.Labels)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	stopPeer()
	<-peerDone
	if left := dockertest.Containers(t, c); len(left) > 0 {
		t.Errorf("%d containers left after cancellation", len(left))
	}
	netIn, err := c.NetworkInspect(ctx, net, network.InspectOptions{})
	if err != nil || !netIn.Internal {
		t.Errorf("network %s: internal %v, %v", net, netIn.Internal, err)
	}
}

// What a killed run left (its owner gone) is removed; what a live run owns
// is not.
func TestRemoveLeftovers(t *testing.T) {
	c := dockertest.Client(t)
	img := baseImage(t)
	ctx := context.Background()
	killed := exec.Command("true")
	if err := killed.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	deadOwner := docker.Owner{Host: host, PID: killed.Process.Pid, Start: 1}.String()

	mk := func(owner string) string {
		l := dockertest.Labels(t, "tests")
		l[docker.LabelOwner] = owner
		id, err := docker.Create(ctx, c, docker.Spec{Image: img, Cmd: []string{"true"}, Labels: l})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { docker.Remove(ctx, c, id, 0) })
		return id
	}
	dead, live := mk(deadOwner), mk(docker.Labels("tests")[docker.LabelOwner])
	nl := dockertest.Labels(t, "network")
	nl[docker.LabelOwner] = deadOwner
	deadNet, err := docker.CreateNetwork(ctx, c, "patchproof-test", nl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { docker.RemoveNetwork(ctx, c, deadNet) })

	removed, err := docker.RemoveLeftovers(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("removed %v", removed)
	if !slices.Contains(removed, "network "+deadNet) {
		t.Errorf("removed %v, want network %s among them", removed, deadNet)
	}
	var ids []string
	for _, s := range dockertest.Containers(t, c) {
		ids = append(ids, s.ID)
	}
	if slices.Contains(ids, dead) || !slices.Contains(ids, live) {
		t.Errorf("containers left %v: want %s removed and %s kept", ids, dead[:12], live[:12])
	}
	if _, err := c.ContainerInspect(ctx, live); err != nil {
		t.Errorf("the live run's container: %v", err)
	}
}
