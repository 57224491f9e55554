package httpd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/workloads/load"
)

// ztsBuild finds a ZTS build with the Apache module, from
// PATCHPROOF_TEST_ZTS_BUILD or the demo's usual place.
func ztsBuild(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PATCHPROOF_TEST_ZTS_BUILD")
	if dir == "" {
		dir = "/tmp/pp-builds/zts"
	}
	if _, err := os.Stat(filepath.Join(dir, "libs", "libphp.so")); err != nil {
		t.Skipf("no ZTS build with libs/libphp.so at %s: set PATCHPROOF_TEST_ZTS_BUILD", dir)
	}
	if _, err := lookApache(""); err != nil {
		t.Skip("apache2 not installed")
	}
	return dir
}

// runDir is a temporary directory Apache's child (www-data) can reach.
func runDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	return dir
}

// threadsPHP answers with the server API, whether it is thread-safe, the
// statistics setting and an environment variable.
const threadsPHP = `<?php
header('Content-Type: text/plain');
echo PHP_SAPI, ' zts=', PHP_ZTS, ' stats=', ini_get('mysqlnd.collect_statistics'), ' env=', getenv('PP_TEST'), "\n";
`

// groupAlive reports whether any process of group pgid is left.
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

func TestApacheServesAndCounts(t *testing.T) {
	build := ztsBuild(t)
	dir := runDir(t)
	const threads = 4
	s, err := Start(context.Background(), Options{
		Dir:     dir,
		Module:  filepath.Join(build, "libs", "libphp.so"),
		Threads: threads,
		Files: map[string][]byte{"t.php": []byte(threadsPHP),
			"fail.php": []byte(`<?php error_log("the page failed"); http_response_code(500);`)},
		INI:       map[string]string{"mysqlnd.collect_statistics": "0"},
		Env:       map[string]string{"PP_TEST": `a "quoted" value`},
		AccessLog: true,
		Probe: Probe{Path: "/t.php", Check: func(status int, body []byte) error {
			if status != 200 || !bytes.HasPrefix(body, []byte("apache2handler zts=1")) {
				return fmt.Errorf("%d %q", status, body)
			}
			return nil
		}},
		Log: testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	resp, err := http.Get(s.URL("/t.php"))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if diff := cmp.Diff("apache2handler zts=1 stats=0 env=a \"quoted\" value\n", body.String()); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}

	// One process of `threads` worker threads (plus Apache's listener and
	// the parent).
	child := childThreads(t, s.PID)
	if child < threads {
		t.Errorf("Apache's child has %d threads, want at least %d", child, threads)
	}

	const n = 300
	r, err := load.Fixed(context.Background(), s.URL("/t.php"), n, load.FixedOptions{Concurrency: threads - 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != n {
		t.Errorf("load: %d requests, want %d", r.Requests, n)
	}
	// What a failed load is reported with: PHP's error, by the log's name.
	if resp, err := http.Get(s.URL("/fail.php")); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if tail := s.LogTail(); !strings.Contains(tail, "the page failed") || !strings.HasPrefix(tail, s.ErrorLog+":") {
		t.Errorf("LogTail after a failed page:\n%s", tail)
	}
	pid := s.PID
	if err := s.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if groupAlive(pid) {
		t.Errorf("process group %d still alive after Stop", pid)
	}
	// Apache writes the access log as it goes; after the stop it is whole.
	log, err := os.ReadFile(s.AccessLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	// n + the probe + the first GET, then the failed page.
	if got, want := len(lines), n+3; got != want {
		t.Fatalf("access log: %d requests, want %d", got, want)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "500 ") {
		t.Errorf("access log's last line %q: want the failed page's 500", last)
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "200 ") {
			t.Errorf("access log line %q: want status 200", l)
			break
		}
	}
}

// childThreads counts the threads of the first child of pid.
func childThreads(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) != 1 {
		t.Fatalf("apache %d has children %q, want one", pid, f)
	}
	ents, err := os.ReadDir("/proc/" + f[0] + "/task")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestStopOnCancel(t *testing.T) {
	build := ztsBuild(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Options{
		Dir:     runDir(t),
		Module:  filepath.Join(build, "libs", "libphp.so"),
		Threads: 2,
		Files:   map[string][]byte{"index.php": []byte("<?php echo 'ok';")},
		Probe:   Probe{Path: "/index.php"},
		Log:     testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	cancel()
	select {
	case <-s.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("server still running 30s after cancel")
	}
	// The watcher stops the group; Stop waits for it and reports no error
	// for a stop it asked for.
	if err := s.Stop(); err != nil {
		t.Errorf("stop after cancel: %v", err)
	}
	if groupAlive(s.PID) {
		t.Errorf("process group %d alive after cancel", s.PID)
	}
}

func TestStartFailures(t *testing.T) {
	build := ztsBuild(t)
	module := filepath.Join(build, "libs", "libphp.so")
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"bad probe answer", Options{
			Module: module,
			Files:  map[string][]byte{"index.php": []byte("<?php http_response_code(503); echo 'down';")},
			Probe:  Probe{Path: "/index.php"},
		}, "status 503: down"},
		{"php fatal error", Options{
			Module: module,
			Files:  map[string][]byte{"index.php": []byte("<?php undefined_function();")},
			Probe:  Probe{Path: "/index.php"},
		}, "Call to undefined function undefined_function()"},
		{"no module", Options{Module: filepath.Join(build, "nonexistent.so")}, "PHP module"},
		{"bad configuration", Options{
			Module: module,
			INI:    map[string]string{"x": "y"},
			Env:    map[string]string{"BAD NAME": "v"},
		}, "exited during start-up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opt.Dir = runDir(t)
			tt.opt.Threads = 2
			tt.opt.StartTimeout = 20 * time.Second
			tt.opt.Log = testLog{t}
			s, err := Start(context.Background(), tt.opt)
			if err == nil {
				s.Stop()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestUnavailableKinds(t *testing.T) {
	_, err := Start(context.Background(), Options{Kind: KindFrankenPHP, Dir: t.TempDir(), Module: "x"})
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Kind != KindFrankenPHP || !errors.Is(err, ErrUnavailable) {
		t.Errorf("%s: error %v, want an *UnavailableError", KindFrankenPHP, err)
	}
	// Apache in a container runs given a *Container, and is bad
	// input without one.
	_, err = Start(context.Background(), Options{Kind: KindApacheDocker, Dir: t.TempDir(), Module: "x"})
	if err == nil || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no container given") {
		t.Errorf("%s without a container: error %v", KindApacheDocker, err)
	}
}

func TestCheckReachable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a directory www-data cannot enter")
	}
	dir := runDir(t)
	closed := filepath.Join(dir, "closed")
	os.MkdirAll(filepath.Join(closed, "inner"), 0o755)
	os.Chmod(closed, 0o700)
	if err := Reachable(filepath.Join(closed, "inner"), "www-data"); err == nil || !strings.Contains(err.Error(), closed) {
		t.Errorf("closed dir: error %v, want one naming %s", err, closed)
	}
	if err := Reachable(dir, "www-data"); err != nil {
		t.Errorf("open dir: %v", err)
	}
}

func TestConfig(t *testing.T) {
	s := &Server{Dir: "/run/x", DocRoot: "/run/x/docroot", ErrorLog: "/run/x/error.log", Port: 8080,
		opt: Options{Threads: 16, Module: "/b/libs/libphp.so", ModulesDir: "/m", User: "www-data", Group: "www-data",
			Env: map[string]string{"B": "2", "A": `x"y`}}.withDefaults()}
	var b bytes.Buffer
	if err := confTemplate.Execute(&b, s.confData()); err != nil {
		t.Fatal(err)
	}
	conf := b.String()
	for _, want := range []string{
		"Listen 127.0.0.1:8080\n",
		"ThreadsPerChild 16\n", "ThreadLimit 16\n", "MaxRequestWorkers 16\n", "ServerLimit 1\n", "StartServers 1\n",
		"KeepAlive On\n", "MaxKeepAliveRequests 0\n",
		`LoadModule php_module "/b/libs/libphp.so"`,
		"SetEnv A \"x\\\"y\"\nSetEnv B \"2\"\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("httpd.conf lacks %q:\n%s", want, conf)
		}
	}
	if diff := cmp.Diff("; Written by patchproof; see workloads/httpd.\ndisplay_errors = Off\nlog_errors = On\na = 1\nb = Off\n",
		string(iniText(map[string]string{"b": "Off", "a": "1"}, "", "/run/x"))); diff != "" {
		t.Errorf("php.ini (-want +got):\n%s", diff)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Apache runs the PR's module: it gets what childenv allows a web server
// (which service.Start gives it) and the hooks it is given, nothing else.
func TestServerEnvironmentIsTheAllowList(t *testing.T) {
	s := &Server{opt: Options{Environ: []string{"LD_PRELOAD=/x/lockcount.so"}}}
	opt := s.serviceOptions([]string{"/usr/sbin/apache2", "-X"}, io.Discard)
	if opt.Kind != childenv.WebServer {
		t.Errorf("Apache starts as a %v child, want a web server", opt.Kind)
	}
	if d := cmp.Diff([]string{"LD_PRELOAD=/x/lockcount.so"}, opt.Env); d != "" {
		t.Errorf("Apache's own variables (-want +got):\n%s", d)
	}
}

// The signals that ended Apache's children are read from the parent's
// lines in the error log, the dumped and the undumped alike; a
// single-process server has no child to tell of.
func TestChildSignals(t *testing.T) {
	log := filepath.Join(t.TempDir(), "error.log")
	os.WriteFile(log, []byte(`[Wed Dec 02 00:32:19.577207 2026] [mpm_event:notice] [pid 16736:tid 16736] AH00489: Apache/2.4.71 (Debian) PHP/8.2.32 configured -- resuming normal operations
[Wed Dec 02 00:32:30.000000 2026] [core:notice] [pid 16736:tid 16736] AH00051: child pid 16700 exit signal Aborted (6), possible coredump in /tmp/x
[Wed Dec 02 00:32:33.265818 2026] [core:notice] [pid 16736:tid 16736] AH00052: child pid 16737 exit signal Segmentation fault (11)
[Wed Dec 02 00:32:33.265867 2026] [mpm_event:notice] [pid 16736:tid 16736] AH00491: caught SIGTERM, shutting down
`), 0o644)
	s := &Server{ErrorLog: log}
	got, ok := s.ChildSignals()
	if diff := cmp.Diff([]string{"Aborted (6)", "Segmentation fault (11)"}, got); !ok || diff != "" {
		t.Errorf("ChildSignals (-want +got), ok %v:\n%s", ok, diff)
	}
	os.WriteFile(log, []byte("[core:notice] AH00491: caught SIGTERM, shutting down\n"), 0o644)
	if got, ok := s.ChildSignals(); !ok || len(got) != 0 {
		t.Errorf("a clean stop: %q, %v", got, ok)
	}
	s.opt.SingleProcess = true
	if _, ok := s.ChildSignals(); ok {
		t.Error("a single-process server told of its children")
	}
	if _, ok := (&Server{ErrorLog: log + ".gone"}).ChildSignals(); ok {
		t.Error("a server whose error log is gone told of its children")
	}
	// A directory used again: the earlier server's crash is not this one's.
	earlier := "[core:notice] AH00052: child pid 7 exit signal Segmentation fault (11)\n"
	os.WriteFile(log, []byte(earlier+"[core:notice] AH00052: child pid 8 exit signal Aborted (6)\n"), 0o644)
	s = &Server{ErrorLog: log, logStart: int64(len(earlier))}
	if got, ok := s.ChildSignals(); !ok || len(got) != 1 || got[0] != "Aborted (6)" {
		t.Errorf("after an earlier server's lines: %q, %v; want this server's Aborted (6) alone", got, ok)
	}
}

// What a failure is reported with is the log's end, however long the log.
func TestLogTailIsTheEnd(t *testing.T) {
	dir := t.TempDir()
	s := &Server{Dir: dir, ErrorLog: filepath.Join(dir, "error.log")}
	big := strings.Repeat("PHP Warning: the same again\n", 2*logTailBytes/28) + "PHP Fatal error: the last one\n"
	os.WriteFile(s.ErrorLog, []byte(big), 0o644)
	if tail := s.LogTail(); !strings.HasSuffix(tail, "PHP Fatal error: the last one") {
		t.Errorf("LogTail of a %d-byte log ends %q", len(big), tail[max(0, len(tail)-80):])
	}
}

// A line of PHP's own longer than any of Apache's (a script can write one
// to stderr) does not end the reading: a crash after it is still told.
func TestChildSignalsAfterALongLine(t *testing.T) {
	log := filepath.Join(t.TempDir(), "error.log")
	body := strings.Repeat("x", 3<<20) + "\n[core:notice] AH00052: child pid 9 exit signal Segmentation fault (11)\n"
	if err := os.WriteFile(log, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, ok := (&Server{ErrorLog: log}).ChildSignals()
	if diff := cmp.Diff([]string{"Segmentation fault (11)"}, got); !ok || diff != "" {
		t.Errorf("ChildSignals (-want +got), ok %v:\n%s", ok, diff)
	}
}
