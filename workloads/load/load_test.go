package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// pcts builds the distribution report.lua prints, in microseconds.
func pcts(p50, p75, p90, p99, p999 int64) []Percentile {
	return []Percentile{
		{50, time.Duration(p50) * time.Microsecond}, {75, time.Duration(p75) * time.Microsecond},
		{90, time.Duration(p90) * time.Microsecond}, {99, time.Duration(p99) * time.Microsecond},
		{99.9, time.Duration(p999) * time.Microsecond},
	}
}

// TestParseReport reads wrk 4.1's output (Debian bookworm) with
// report.lua, captured against a local HTTP server answering 200, the same
// server answering 404, and one that accepts connections and never
// answers. The figures are the JSON line's, exact where the text report
// above it rounds them ("1144 requests in 1.00s, 588.76KB read").
func TestParseReport(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Result
	}{
		{"ok.out", Result{
			Requests: 1144, Duration: 1001749 * time.Microsecond, ReadBytes: 602888,
			RequestsPerSec: 1144 / 1.001749, TransferPerSec: 602888 / 1.001749,
			Latency: Latency{Min: 329 * time.Microsecond, Max: 9320 * time.Microsecond,
				Avg: 1677668 * time.Nanosecond, Stdev: 988565 * time.Nanosecond,
				Percentiles: pcts(1384, 2109, 2993, 4744, 7569)},
		}},
		{"non2xx.out", Result{
			Requests: 1270, Duration: 1001405 * time.Microsecond, ReadBytes: 660400,
			RequestsPerSec: 1270 / 1.001405, TransferPerSec: 660400 / 1.001405,
			Latency: Latency{Min: 321 * time.Microsecond, Max: 15886 * time.Microsecond,
				Avg: 1797751 * time.Nanosecond, Stdev: 1771059 * time.Nanosecond,
				Percentiles: pcts(1091, 2044, 3983, 8147, 15743)},
			NonSuccess: 1270,
		}},
		{"no-responses.out", Result{
			Duration: 1001672 * time.Microsecond,
			Latency:  Latency{Percentiles: pcts(0, 0, 0, 0, 0)},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseReport(out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tc.want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("parseReport (-want +got):\n%s", diff)
			}
		})
	}
}

// Output that is not report.lua's line is an error, never a zero Result.
func TestParseReportErrors(t *testing.T) {
	out, err := os.ReadFile(filepath.Join("testdata", "ok.out"))
	if err != nil {
		t.Fatal(err)
	}
	text, line, _ := bytes.Cut(out, []byte("\n{"))
	line = append([]byte("{"), line...)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"text report only", string(text), "no JSON line"},
		{"cannot connect", "unable to connect to 127.0.0.1:9 Connection refused\n", "no JSON line"},
		{"truncated", string(line[:len(line)/2]), "unexpected EOF"},
		{"unknown field", strings.Replace(string(line), `"bytes"`, `"kbytes"`, 1), `unknown field "kbytes"`},
		{"no duration", `{"requests":3}`, "no duration"},
		{"string count", strings.Replace(string(line), `"requests":1144`, `"requests":"1144"`, 1), "requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseReport([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("parseReport = %v, want one line with %q", err, tc.want)
			}
		})
	}
}

func TestPassError(t *testing.T) {
	const url = "http://127.0.0.1:18092/"
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"ok", Result{Requests: 10}, ""},
		{"non2xx", Result{Requests: 82248, NonSuccess: 8224}, "load http://127.0.0.1:18092/: 8224 of 82248 responses not 2xx or 3xx"},
		{"timeout", Result{Requests: 826, Errors: SocketErrors{Timeout: 10}}, "load http://127.0.0.1:18092/: socket errors: connect 0, read 0, write 0, timeout 10"},
		{"socket errors", Result{Requests: 39312, Errors: SocketErrors{Read: 2069, Write: 9749}}, "load http://127.0.0.1:18092/: socket errors: connect 0, read 2069, write 9749, timeout 0"},
		{"no responses", Result{}, "load http://127.0.0.1:18092/: no request completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkPass(url, false, &tc.r)
			got := ""
			if err != nil {
				got = err.Error()
				var pe *PassError
				if !errors.As(err, &pe) || pe.Result != &tc.r {
					t.Errorf("error %v is not a *PassError with the result", err)
				}
			}
			if got != tc.want {
				t.Errorf("checkPass = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	got := Options{Duration: 3 * time.Second, Timeout: time.Second, Headers: []string{"Host: x"}, CPUs: "1"}.resolved().args("http://h/", "/tmp/r.lua", 3*time.Second)
	want := []string{"taskset", "-c", "1", "wrk", "-t", "2", "-c", "16", "-d", "3s", "-s", "/tmp/r.lua", "--timeout", "1s", "-H", "Host: x", "http://h/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	for _, bad := range []Options{
		{Duration: 1500 * time.Millisecond},
		{Warmup: 500 * time.Millisecond},
		{Threads: 4, Connections: 2},
	} {
		if err := bad.resolved().check(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func needWrk(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk not installed")
	}
}

// server answers 200 with a small body, or 500 to every tenth request
// when failing.
func server(t *testing.T, failing bool) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%10 == 0 && failing {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, strings.Repeat("x", 100))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRun(t *testing.T) {
	needWrk(t)
	srv, served := server(t, false)
	var log bytes.Buffer
	r, err := Run(context.Background(), srv.URL+"/", Options{
		Threads: 1, Connections: 2, Duration: time.Second, Warmup: time.Second, Log: &log,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if r.URL != srv.URL+"/" || r.Threads != 1 || r.Connections != 2 {
		t.Errorf("Run: %s with %d threads, %d connections; want the options'", r.URL, r.Threads, r.Connections)
	}
	if r.Requests <= 0 || r.Requests > served.Load() || r.NonSuccess != 0 || r.Errors.Total() != 0 {
		t.Errorf("Run: %d requests (server saw %d), %d non-2xx, %+v", r.Requests, served.Load(), r.NonSuccess, r.Errors)
	}
	if _, ok := r.Latency.Percentile(99); !ok || r.RequestsPerSec <= 0 {
		t.Errorf("Run: no 99th percentile or rate in %+v", r)
	}
	if runs := strings.Count(log.String(), "requests in"); runs != 2 {
		t.Errorf("log holds %d wrk reports, want the warm-up's and the run's:\n%s", runs, log.String())
	}
}

func TestRunNon2xx(t *testing.T) {
	needWrk(t)
	srv, _ := server(t, true)
	r, err := Run(context.Background(), srv.URL+"/", Options{Threads: 1, Connections: 2, Duration: time.Second})
	var pe *PassError
	if !errors.As(err, &pe) {
		t.Fatalf("Run: %v, want a *PassError", err)
	}
	if pe.Warmup || r == nil || r.NonSuccess == 0 || r.NonSuccess > r.Requests {
		t.Errorf("Run: %+v, result %+v", pe, r)
	}
}

// countingListener counts the bytes the server writes on every connection.
type countingListener struct {
	net.Listener
	written *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.written}, nil
}

type countingConn struct {
	net.Conn
	written *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.written.Add(int64(n))
	return n, err
}

// TestRunExact proves the figures are wrk's exact ones from the JSON line,
// not its rounded text: a server answers exactly 200 requests (every tenth
// with 500) and holds every later one past the end of the run, so wrk
// completes exactly 200 and has read every byte the server wrote, a count
// the text report gives only to two decimals of a KB. The server also
// fails any request without the -H header.
func TestRunExact(t *testing.T) {
	needWrk(t)
	const answer = 200
	var seen, written atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Patchproof") != "exact" {
			http.Error(w, "no X-Patchproof header", http.StatusBadRequest)
			return
		}
		n := seen.Add(1)
		switch {
		case n > answer:
			<-release
		case n%10 == 0:
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			fmt.Fprint(w, strings.Repeat("x", int(n)))
		}
	}))
	srv.Listener = countingListener{srv.Listener, &written}
	srv.Start()
	t.Cleanup(srv.Close)
	// Before Close, which waits for the held handlers.
	t.Cleanup(func() { close(release) })

	var log bytes.Buffer
	url := srv.URL + "/exact"
	_, err := Run(context.Background(), url, Options{
		Threads: 1, Connections: 2, Duration: time.Second, Headers: []string{"X-Patchproof: exact"}, Log: &log,
	})
	var pe *PassError
	if !errors.As(err, &pe) {
		t.Fatalf("Run: %v, want a *PassError for the 500s\n%s", err, log.String())
	}
	got := pe.Result
	want := Result{URL: url, Threads: 1, Connections: 2, Requests: answer, ReadBytes: written.Load(), NonSuccess: answer / 10}
	if diff := cmp.Diff(want, *got, cmpopts.IgnoreFields(Result{}, "Duration", "RequestsPerSec", "TransferPerSec", "Latency")); diff != "" {
		t.Errorf("Run (-want +got):\n%s\n%s", diff, log.String())
	}
	if got.Duration < time.Second || got.Duration%time.Microsecond != 0 {
		t.Errorf("duration %v, want at least 1s in whole microseconds", got.Duration)
	}
	l := got.Latency
	p50, _ := l.Percentile(50)
	p999, ok := l.Percentile(99.9)
	if !ok || l.Min <= 0 || l.Min > p50 || p50 > p999 || p999 > l.Max || l.Avg < l.Min || l.Avg > l.Max {
		t.Errorf("latency %+v: want 0 < min <= p50 <= p99.9 <= max, min <= avg <= max", l)
	}
}

func TestRunWarmupFails(t *testing.T) {
	needWrk(t)
	srv, _ := server(t, true)
	_, err := Run(context.Background(), srv.URL+"/", Options{Threads: 1, Connections: 1, Duration: time.Second, Warmup: time.Second})
	var pe *PassError
	if !errors.As(err, &pe) || !pe.Warmup || !strings.HasPrefix(err.Error(), "warm-up ") {
		t.Fatalf("Run: %v, want a warm-up *PassError", err)
	}
}

func TestRunCannotStart(t *testing.T) {
	needWrk(t)
	// Nothing listens on port 1.
	_, err := Run(context.Background(), "http://127.0.0.1:1/", Options{Duration: time.Second})
	var pe *PassError
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("Run: %v, want wrk's own complaint, not a *PassError", err)
	}
	_, err = Run(context.Background(), "http://127.0.0.1:1/", Options{Wrk: "/nonexistent/wrk", Duration: time.Second})
	if err == nil {
		t.Error("Run with no wrk binary: no error")
	}
}

// TestRunCancel stops a long run and checks that no wrk is left: wrk's
// command line carries the server's unique address.
func TestRunCancel(t *testing.T) {
	needWrk(t)
	srv, _ := server(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	// taskset puts a second program in the group: the kill must reach wrk.
	_, err := Run(ctx, srv.URL+"/", Options{Threads: 1, Connections: 1, Duration: time.Minute, CPUs: "0"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run: %v, want the context's error", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("Run returned after %v", el)
	}
	if pids := processesWith(t, srv.URL); len(pids) != 0 {
		t.Errorf("processes still running with %s: %v", srv.URL, pids)
	}
}

func processesWith(t *testing.T, arg string) []string {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []string
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(arg)) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

func TestFixed(t *testing.T) {
	srv, served := server(t, false)
	r, err := Fixed(context.Background(), srv.URL+"/", 250, FixedOptions{Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 250 || served.Load() != 250 || r.ReadBytes != 250*100 {
		t.Errorf("Fixed: %d requests, %v bytes; server saw %d; want 250 and 25000", r.Requests, r.ReadBytes, served.Load())
	}

	failing, _ := server(t, true)
	r, err = Fixed(context.Background(), failing.URL+"/", 100, FixedOptions{Concurrency: 3})
	var pe *PassError
	if !errors.As(err, &pe) || r.Requests != 100 || r.NonSuccess != 10 {
		t.Errorf("Fixed against a failing server: %v, %+v; want a *PassError, 10 of 100 failed", err, r)
	}

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	r, err = Fixed(context.Background(), down.URL+"/", 5, FixedOptions{})
	if !errors.As(err, &pe) || r.Requests != 0 || r.Errors.Connect != 5 {
		t.Errorf("Fixed against a closed port: %v, %+v; want 5 connect errors", err, r)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fixed(ctx, srv.URL+"/", 5, FixedOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Fixed with a cancelled context: %v", err)
	}
}
