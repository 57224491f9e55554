package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"github.com/patchproof/patchproof/workloads/callgrind"
	"github.com/patchproof/patchproof/workloads/httpd"
	"github.com/patchproof/patchproof/workloads/load"
	"github.com/patchproof/patchproof/workloads/lockcount"
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// window sends the warm-up requests, then calls measure around exactly n
// requests and counts the database connections opened meanwhile.
func (b *bencher) window(ctx context.Context, s *httpd.Server, n int, measure func(inside func() error) error) (*int64, []string, error) {
	o := b.opt
	url := s.URL(o.Workload.Path)
	fo := load.FixedOptions{Concurrency: o.WindowConcurrency, Header: o.Workload.Header}
	if _, err := load.Fixed(ctx, url, o.WindowWarmup, fo); err != nil {
		return nil, nil, fmt.Errorf("warm-up: %w", err)
	}
	var warnings []string
	c0, cerr := o.DB.StatusCounter(ctx, "Connections")
	err := measure(func() error {
		r, err := load.Fixed(ctx, url, n, fo)
		if err != nil {
			return err
		}
		if r.Requests != int64(n) {
			return fmt.Errorf("window: %d requests completed, want %d", r.Requests, n)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	c1, cerr1 := o.DB.StatusCounter(ctx, "Connections")
	if cerr != nil || cerr1 != nil {
		warnings = append(warnings, fmt.Sprintf("new database connections in the window unknown: %v", firstErr(cerr, cerr1)))
		return nil, warnings, nil
	}
	// The second read's own connection is one of them.
	nc := c1 - c0 - 1
	if nc > 0 {
		warnings = append(warnings, fmt.Sprintf("%d database connections opened in the window: a PHP thread met its first request there, so its connection's cost is in the count", nc))
	}
	return &nc, warnings, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// lockRun counts pthread_mutex_lock calls over a window of requests, on a
// fresh server with the counter preloaded.
func (b *bencher) lockRun(ctx context.Context, a arm, dir string, smp *Sample) (_ *LockSample, err error) {
	o := b.opt
	so := b.serverOptions(a, dir)
	tables := filepath.Join(dir, lockDirName)
	if err := lockcount.PrepareDir(tables); err != nil {
		return nil, err
	}
	so.Environ = lockcount.Env(b.lockSO, tables)
	s, err := httpd.Start(ctx, so)
	if err != nil {
		return nil, err
	}
	defer func() { err = b.stopServer(a, s, err) }()
	wctx, cancel := context.WithTimeout(ctx, windowTimeout)
	defer cancel()
	var (
		d     lockcount.Delta
		after lockcount.Snapshot
	)
	nc, warnings, err := b.window(wctx, s, o.LockRequests, func(inside func() error) error {
		before, err := lockcount.Settle(wctx, tables, settleQuiet)
		if err != nil {
			return err
		}
		if err := inside(); err != nil {
			return err
		}
		after, err = lockcount.Settle(wctx, tables, settleQuiet)
		if err != nil {
			return err
		}
		d, err = lockcount.Diff(before, after)
		return err
	})
	if err != nil {
		return nil, err
	}
	smp.Warnings = append(smp.Warnings, prefix("locks: ", append(warnings, d.Warnings...))...)
	n := float64(o.LockRequests)
	ls := &LockSample{
		Requests:         o.LockRequests,
		Locks:            d.Locks,
		Trylocks:         d.Trylocks,
		LocksPerRequest:  float64(d.Locks) / n,
		DistinctMutexes:  d.Distinct(),
		NewDBConnections: nc,
	}
	if top, ok := d.Top(); ok {
		ls.TopMutexPerRequest = float64(top.Lock) / n
	}
	sh, pt := d.Split()
	ls.SharedLocksPerRequest, ls.PerThreadLocksPerRequest = float64(sh)/n, float64(pt)/n
	ls.SharedMutexes = d.SharedMutexes()
	// While the server still runs: its memory names the mutex.
	if err := hostPIDs(s, &after); err != nil {
		smp.Warnings = append(smp.Warnings, "locks: statistics mutex not named: "+err.Error())
	} else if named, err := lockcount.NameHeld(d, after, statsSymbol); err != nil {
		smp.Warnings = append(smp.Warnings, "locks: statistics mutex not named: "+err.Error())
	} else {
		ls.StatsMutex = statsMutex(named, n)
	}
	b.step("%s locks: %.2f a request (%.2f on %d shared mutexes, %.2f on per-thread ones), %s on the statistics mutex, %d mutexes",
		a, ls.LocksPerRequest, ls.SharedLocksPerRequest, ls.SharedMutexes, ls.PerThreadLocksPerRequest, statsMutexStep(ls.StatsMutex), ls.DistinctMutexes)
	return ls, nil
}

// hostPIDs rewrites the PIDs of snap's tables, which the counter wrote down
// as its process saw them, into this host's, which /proc knows them by:
// they differ for a server in a container.
func hostPIDs(s *httpd.Server, snap *lockcount.Snapshot) error {
	for i, t := range snap.Tables {
		pid, err := s.HostPID(t.PID)
		if err != nil {
			return err
		}
		snap.Tables[i].PID = pid
	}
	return nil
}

// statsSymbol is mysqlnd's global statistics: a pointer to a heap block
// that, where statistics take a mutex, holds that mutex's address.
const statsSymbol = "mysqlnd_global_stats"

func statsMutex(named lockcount.Named, requests float64) *StatsMutexSample {
	sm := &StatsMutexSample{Locks: named.Lock, LocksPerRequest: float64(named.Lock) / requests}
	if len(named.Blocks) > 0 {
		sm.Block = fmt.Sprintf("%#x", named.Blocks[0].Addr)
	}
	if len(named.Mutexes) > 0 {
		sm.Mutex = fmt.Sprintf("%#x", named.Mutexes[0].Addr)
		sm.Shared = named.Mutexes[0].Shared
	}
	return sm
}

func statsMutexStep(sm *StatsMutexSample) string {
	if sm == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.2f", sm.LocksPerRequest)
}

// instrRun counts instructions over a window of requests with callgrind:
// a fresh single-process server under valgrind, dumps cut by the marker
// page (see package callgrind).
func (b *bencher) instrRun(ctx context.Context, a arm, dir string, smp *Sample) (_ *InstructionSample, err error) {
	o := b.opt
	so := b.serverOptions(a, dir)
	out := filepath.Join(dir, callgrindDirName)
	if err := callgrind.PrepareDir(out); err != nil {
		return nil, err
	}
	files := map[string][]byte{markerPath[1:]: callgrind.MarkerPHP()}
	for k, v := range so.Files {
		files[k] = v
	}
	so.Files = files
	so.Wrap = callgrind.Wrap(o.Valgrind, out)
	so.SingleProcess = true
	so.StartTimeout = callgrindStartTimeout
	s, err := httpd.Start(ctx, so)
	if err != nil {
		return nil, err
	}
	defer func() { err = b.stopServer(a, s, err) }()
	wctx, cancel := context.WithTimeout(ctx, windowTimeout)
	defer cancel()
	mark := func(n int) ([]callgrind.Dump, error) {
		if err := getMarker(wctx, s.URL(markerPath)); err != nil {
			return nil, err
		}
		return callgrind.WaitDumps(wctx, out, n)
	}
	var ds []callgrind.Dump
	nc, warnings, err := b.window(wctx, s, o.CallgrindRequests, func(inside func() error) error {
		if _, err := mark(1); err != nil {
			return err
		}
		if _, err := mark(2); err != nil {
			return err
		}
		if err := inside(); err != nil {
			return err
		}
		ds, err = mark(3)
		return err
	})
	if err != nil {
		return nil, err
	}
	smp.Warnings = append(smp.Warnings, prefix("instructions: ", warnings)...)
	window, marker := ds[2].Instructions, ds[1].Instructions
	if window < marker {
		return nil, fmt.Errorf("callgrind: window of %d requests counted %d instructions, fewer than one marker request's %d", o.CallgrindRequests, window, marker)
	}
	is := &InstructionSample{
		Requests:               o.CallgrindRequests,
		Instructions:           window - marker,
		MarkerInstructions:     marker,
		InstructionsPerRequest: float64(window-marker) / float64(o.CallgrindRequests),
		NewDBConnections:       nc,
	}
	b.step("%s instructions: %.0f a request", a, is.InstructionsPerRequest)
	return is, nil
}

// getMarker requests the marker page and checks its answer.
func getMarker(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("marker request: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("marker request: %w", err)
	}
	if resp.StatusCode != http.StatusOK || string(body) != "mark\n" {
		return fmt.Errorf("marker request: status %d: %.200q", resp.StatusCode, body)
	}
	return nil
}

func prefix(p string, ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = p + w
	}
	return out
}
