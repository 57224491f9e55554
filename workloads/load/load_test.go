package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const (
	us = time.Microsecond
	ms = time.Millisecond
	kB = 1024.0
	mB = 1024 * 1024.0
)

// pcts builds the --latency distribution.
func pcts(p50, p75, p90, p99 time.Duration) []Percentile {
	return []Percentile{{50, p50}, {75, p75}, {90, p90}, {99, p99}}
}

// TestParseGolden reads reports captured from wrk 4.1 (Debian bookworm)
// against small Go servers: one answering 200, one answering 500 to every
// tenth request, one stalling past --timeout, one dropping connections and
// then its listener, and one that never answers.
func TestParseGolden(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Result
	}{
		{"ok-latency.txt", Result{
			URL: "http://127.0.0.1:18082/", Threads: 2, Connections: 8,
			Requests: 88908, Duration: 2 * time.Second, ReadBytes: 53.42 * mB,
			RequestsPerSec: 44386.51, TransferPerSec: 26.67 * mB,
			Latency: Latency{Avg: 591740 * time.Nanosecond, Stdev: 1120 * us, Max: 12050 * us, WithinStdev: 89.15,
				Percentiles: pcts(138*us, 527*us, 1850*us, 5510*us)},
			ThreadRate: Stat{Avg: 22300, Stdev: 5810, Max: 42270, WithinStdev: 75},
		}},
		{"ok-nolatency.txt", Result{
			URL: "http://127.0.0.1:18082/", Threads: 1, Connections: 4,
			Requests: 50266, Duration: 1100 * ms, ReadBytes: 30.20 * mB,
			RequestsPerSec: 45681.21, TransferPerSec: 27.45 * mB,
			Latency:    Latency{Avg: 165520 * time.Nanosecond, Stdev: 338120 * time.Nanosecond, Max: 3750 * us, WithinStdev: 92.10},
			ThreadRate: Stat{Avg: 46070, Stdev: 10530, Max: 62710, WithinStdev: 63.64},
		}},
		{"non2xx.txt", Result{
			URL: "http://127.0.0.1:18092/", Threads: 2, Connections: 8,
			Requests: 82248, Duration: 2010 * ms, ReadBytes: 45.83 * mB,
			RequestsPerSec: 40961.89, TransferPerSec: 22.83 * mB,
			Latency: Latency{Avg: 635120 * time.Nanosecond, Stdev: 1170 * us, Max: 11200 * us, WithinStdev: 89.04,
				Percentiles: pcts(136*us, 671*us, 1940*us, 5780*us)},
			ThreadRate: Stat{Avg: 20640, Stdev: 4390, Max: 28830, WithinStdev: 70},
			NonSuccess: 8224,
		}},
		{"timeout.txt", Result{
			URL: "http://127.0.0.1:18093/", Threads: 2, Connections: 8,
			Requests: 826, Duration: 3010 * ms, ReadBytes: 508.18 * kB,
			RequestsPerSec: 274.47, TransferPerSec: 168.87 * kB,
			Latency: Latency{Avg: 152860 * time.Nanosecond, Stdev: 292140 * time.Nanosecond, Max: 2860 * us, WithinStdev: 93.14,
				Percentiles: pcts(77*us, 134*us, 249*us, 1340*us)},
			ThreadRate: Stat{Avg: 960, Stdev: 1000, Max: 2060, WithinStdev: 83.33},
			Errors:     SocketErrors{Timeout: 10},
		}},
		{"socket-errors.txt", Result{
			URL: "http://127.0.0.1:18094/", Threads: 2, Connections: 8,
			Requests: 39312, Duration: 3020 * ms, ReadBytes: 23.62 * mB,
			RequestsPerSec: 13022.97, TransferPerSec: 7.82 * mB,
			Latency: Latency{Avg: 265320 * time.Nanosecond, Stdev: 454440 * time.Nanosecond, Max: 9250 * us, WithinStdev: 92,
				Percentiles: pcts(132*us, 267*us, 619*us, 2250*us)},
			ThreadRate: Stat{Avg: 15180, Stdev: 4950, Max: 23840, WithinStdev: 84.62},
			Errors:     SocketErrors{Read: 2069, Write: 9749},
		}},
		{"no-responses.txt", Result{
			URL: "http://127.0.0.1:18095/", Threads: 1, Connections: 2,
			Duration: 3010 * ms,
			Latency: Latency{WithinStdev: math.NaN(),
				Percentiles: pcts(0, 0, 0, 0)},
			ThreadRate: Stat{WithinStdev: math.NaN()},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tc.want, got, cmpopts.EquateApprox(1e-12, 0), cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseUnits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"0.00us", 0}, {"77.00us", 77 * us}, {"1.85ms", 1850 * us}, {"1.16s", 1160 * ms},
		{"1.00m", time.Minute}, {"1.50h", 90 * time.Minute},
	} {
		if got, err := parseTime(tc.in); err != nil || got != tc.want {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want float64
	}{{"0.00B", 0}, {"487.27KB", 487.27 * kB}, {"1.50GB", 1.5 * 1024 * mB}, {"12B", 12}} {
		if got, err := parseBytes(tc.in); err != nil || math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("parseBytes(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "unable to connect to 127.0.0.1:9 Connection refused\n",
		"  10 requests in 1.00s, 1.00XB read\nRequests/sec: 10\n", "  10 requests in 1.00s, 1.00KB read\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

func TestPassError(t *testing.T) {
	for _, tc := range []struct {
		file, want string
	}{
		{"ok-latency.txt", ""},
		{"non2xx.txt", "load http://127.0.0.1:18092/: 8224 of 82248 responses not 2xx or 3xx"},
		{"timeout.txt", "load http://127.0.0.1:18093/: socket errors: connect 0, read 0, write 0, timeout 10"},
		{"socket-errors.txt", "load http://127.0.0.1:18094/: socket errors: connect 0, read 2069, write 9749, timeout 0"},
		{"no-responses.txt", "load http://127.0.0.1:18095/: no request completed"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			err = checkPass(r.URL, false, r)
			got := ""
			if err != nil {
				got = err.Error()
				var pe *PassError
				if !errors.As(err, &pe) || pe.Result != r {
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
	got := Options{Duration: 3 * time.Second, Timeout: time.Second, Headers: []string{"Host: x"}, CPUs: "1"}.resolved().args("http://h/", 3*time.Second)
	want := []string{"taskset", "-c", "1", "wrk", "-t", "2", "-c", "16", "-d", "3s", "--latency", "--timeout", "1s", "-H", "Host: x", "http://h/"}
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

// A garbled latency percentile is an error, not a silently wrong row.
func TestParseBadPercentile(t *testing.T) {
	out, err := os.ReadFile(filepath.Join("testdata", "ok-latency.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`(?m)^(\s+50%\s+)\S+`).ReplaceAllString(string(out), "${1}12.3parsecs")
	if bad == string(out) {
		t.Fatal("the sample has no 50% percentile line")
	}
	if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "parsecs") {
		t.Errorf("Parse of a bad percentile = %v, want an error naming the line", err)
	}
}
