package httpd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/docker/dockertest"
	"github.com/patchproof/patchproof/workloads/cputime"
)

// probePHP says what the module's process sees: its PID (in the
// container's namespace), whether the CI's variables reached it, and
// whether it can reach beyond the run's network.
const probePHP = `<?php
header('Content-Type: text/plain');
$ci = 0;
foreach (getenv() as $k => $v) { if (preg_match('/^(GITHUB_|GH_|ACTIONS_|RUNNER_)/', $k)) $ci++; }
$out = @fsockopen('192.0.2.1', 80, $errno, $errstr, 2) ? 'reachable' : 'unreachable';
echo 'pid=', getmypid(), ' zts=', PHP_ZTS, ' ci=', $ci, ' outside=', $out, ' env=', getenv('PP_TEST'), "\n";
`

// A ZTS module served by Apache in a container of the serve image: it
// answers this host at the container's address, sees none of the CI's
// variables and no route out, its CPU time comes from the container's
// cgroup, a PID it reports is found on this host, and Stop leaves no
// container.
func TestApacheInContainer(t *testing.T) {
	build := ztsBuild(t)
	c := dockertest.Client(t)
	img, err := builders.EnsureServeImage(t.Context(), c, dockertest.ImageOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN"} {
		t.Setenv(v, "must-not-leak")
	}
	dir := runDir(t)
	start := time.Now()
	s, err := Start(t.Context(), Options{
		Dir: dir, Module: filepath.Join(build, "libs", "libphp.so"), Threads: 4,
		Files:     map[string][]byte{"index.php": []byte(probePHP), "load.php": []byte("<?php echo str_repeat('x', 100);")},
		Env:       map[string]string{"PP_TEST": "ok"},
		Probe:     Probe{Path: "/load.php"},
		Placement: &Container{Client: c, Image: img, Network: dockertest.Network(t, c), Labels: dockertest.Labels(t, "server")},
		Log:       testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	t.Logf("apache in a container ready in %v", time.Since(start).Round(time.Millisecond))
	if s.Kind != KindApacheDocker || s.ContainerID == "" || s.Host == "127.0.0.1" {
		t.Errorf("server %s in %q at %s: want a container's address", s.Kind, s.ContainerID, s.Host)
	}
	body := get(t, s.URL("/index.php"))
	var pid, zts, ci int
	var outside, env string
	if _, err := fmt.Sscanf(body, "pid=%d zts=%d ci=%d outside=%s env=%s", &pid, &zts, &ci, &outside, &env); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	if zts != 1 || ci != 0 || outside != "unreachable" || env != "ok" {
		t.Errorf("answer %q: want zts=1 ci=0 outside=unreachable env=ok", body)
	}
	host, err := s.HostPID(pid)
	if err != nil {
		t.Fatal(err)
	}
	if host == pid {
		t.Errorf("PID %d in the container is %d here too: not a namespace of its own?", pid, host)
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", host)); err != nil || !strings.HasSuffix(exe, "apache2") {
		t.Errorf("host PID %d runs %q (%v), want apache2", host, exe, err)
	}
	m := s.Meter()
	if m == nil || m.Source() != cputime.SourceContainer {
		t.Fatalf("meter %v: want the container's cgroup", m)
	}
	u0, err := m.Usage()
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		get(t, s.URL("/load.php"))
	}
	u1, err := m.Usage()
	if err != nil {
		t.Fatal(err)
	}
	// The engine counts user and system time in clock ticks (10 ms), the
	// total in nanoseconds: the halves agree with it to a tick or two.
	if d := u1.Sub(u0); d.Total <= 0 || d.User < 0 || d.System < 0 || d.User+d.System > d.Total+20*time.Millisecond {
		t.Errorf("CPU time %+v then %+v after 200 requests: want it to grow, user and system within the total", u0, u1)
	}
	t.Logf("200 requests: %+v CPU in the container", u1.Sub(u0))
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := dockertest.Containers(t, c); len(left) > 0 {
		t.Errorf("%d containers left after Stop", len(left))
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return strings.TrimSpace(string(b))
}
