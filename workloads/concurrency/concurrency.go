// Package concurrency owns the workload of the concurrency check and how it
// is driven: a fixed unit of mysqlnd work (counted.php: the same queries on
// the same 20 rows, over connections of its own) served by the benchmark's
// threaded server (Apache mpm_event, one process, 16 ZTS PHP threads,
// statistics on), first serially, to learn how much one request moves each
// of mysqlnd's process-wide counters, then by many threads at once.
//
// It measures; it does not judge. [Counters] returns the per-request deltas
// and the growth under concurrency; verify/race decides whether an update
// was lost. [Hammer] only serves the concurrent load, for a ThreadSanitizer
// build whose reports are what counts.
package concurrency

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/workloads/httpd"
	"github.com/patchproof/patchproof/workloads/load"
	"github.com/patchproof/patchproof/workloads/workload"
)

//go:embed schema.sql
var schema []byte

//go:embed counted.php
var countedPHP []byte

//go:embed stats.php
var statsPHP []byte

// Rows is how many rows one request reads: 20 by a prepared mysqli
// statement, 20 by a plain mysqli query, 20 by a PDO prepared statement.
const Rows = 60

// Workload returns the check's workload.
func Workload() workload.Workload {
	return workload.Workload{
		Name:   "counted",
		Schema: schema,
		Files:  map[string][]byte{"counted.php": countedPHP, "stats.php": statsPHP},
		Path:   "/counted.php",
		Check:  Check,
	}
}

// Check accepts the response of a request that did all of its work.
func Check(status int, body []byte) error {
	want := "counted " + strconv.Itoa(Rows) + "\n"
	if status != http.StatusOK || string(body) != want {
		return fmt.Errorf("counted.php: status %d, body %.200q, want 200 %q", status, body, want)
	}
	return nil
}

// Options configure a run. Module and Dir must be given; the zero value of
// every other field works.
type Options struct {
	// Module is the ZTS build's Apache module (libs/libphp.so).
	Module string
	// Dir is the run directory: the server's configuration and logs.
	Dir string
	// DB is the database the workload's data is loaded into and read from,
	// over its unix socket.
	DB workload.DB
	// Threads is the number of PHP threads in the one server process.
	Threads int
	// Requests is the number of concurrent requests.
	Requests int
	// Connections is how many keep-alive connections carry them, fewer than
	// Threads: with more connections than threads the event MPM closes
	// kept-alive ones.
	Connections int
	// Serial is the number of requests of each of the two serial phases.
	Serial int
	// MemoryStatistics turns mysqlnd.collect_memory_statistics on besides
	// mysqlnd.collect_statistics: the mem_* counters, which mysqlnd updates
	// on every allocation it makes, many times a request, move too.
	MemoryStatistics bool
	// Environ is added to the server's environment (a sanitizer's runtime
	// and options).
	Environ []string
	// Placement is where the server runs; default this host. The
	// database's socket is bound into a container beside its own Binds
	// (where a sanitizer's reports go).
	Placement httpd.Placement
	// Timeout bounds each phase's load.
	Timeout time.Duration
	// Log receives the server's lifecycle and the run's steps.
	Log io.Writer
	// Step, when set, is told each step, for a progress display.
	Step func(step string)
}

// Defaults in one place.
const (
	DefaultThreads     = 16
	DefaultRequests    = 20000
	DefaultConnections = 12
	DefaultSerial      = 25
	defaultTimeout     = 5 * time.Minute
)

func (o Options) withDefaults() Options {
	if o.Threads == 0 {
		o.Threads = DefaultThreads
	}
	if o.Requests == 0 {
		o.Requests = DefaultRequests
	}
	if o.Connections == 0 {
		o.Connections = min(DefaultConnections, o.Threads)
	}
	if o.Serial == 0 {
		o.Serial = DefaultSerial
	}
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout
	}
	if o.Placement == nil {
		o.Placement = httpd.Host{}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Step == nil {
		o.Step = func(string) {}
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Module == "":
		return errors.New("no ZTS Apache module given")
	case o.Dir == "":
		return errors.New("no run directory given")
	case o.DB.Socket == "":
		return errors.New("no database socket given")
	case o.Threads < 2:
		return fmt.Errorf("%d PHP threads: a concurrency check needs at least 2", o.Threads)
	case o.Connections < 2 || o.Connections > o.Threads:
		return fmt.Errorf("%d connections: want 2 to %d (the PHP threads)", o.Connections, o.Threads)
	case o.Requests < 1 || o.Serial < 1:
		return fmt.Errorf("%d requests, %d serial: want at least 1 each", o.Requests, o.Serial)
	}
	return nil
}

// Result is what a counter run measured. Deltas are signed: a gauge such as
// active_connections goes up and down within a request.
type Result struct {
	Threads     int `json:"threads"`
	Connections int `json:"connections"`
	// Requests is the number of requests served concurrently.
	Requests int `json:"requests"`
	// Serial is the number of requests of each serial phase.
	Serial int `json:"serial_requests"`
	// PerRequest is how much one request moved each counter, learnt from
	// the serial phases (every counter mysqlnd has, zeros included).
	PerRequest map[string]int64 `json:"per_request"`
	// Grew is how much each counter grew while Requests were served
	// concurrently.
	Grew map[string]int64 `json:"grew"`
	// DBConnections is how many connections the database server counted
	// during the concurrent phase: its own exact count of the work done.
	DBConnections int64 `json:"db_connections"`
	// PID is the server process that held the counters.
	PID int `json:"pid"`
	// CPUs is how many CPUs that process could run on in the concurrent
	// phase (0: unknown). On one, threads take turns and a plain += of
	// one instruction cannot lose an update.
	CPUs       int   `json:"cpus"`
	DurationMS int64 `json:"duration_ms"` // of the concurrent phase
	// ChildSignals are the signals that ended the server's Apache
	// children, by Apache's names: PHP crashed, while serving or at the
	// stop, which no response shows.
	ChildSignals []string `json:"child_signals,omitempty"`
	// ChildSignalsRead says the server's error log was read for them:
	// without it, no crash is known of either way.
	ChildSignalsRead bool `json:"child_signals_read"`
}

// ConnectionsPerRequest is how many database connections one request opens.
const ConnectionsPerRequest = 2

// ErrNotDeterministic is wrapped when two serial phases moved a counter by
// different amounts: the workload, not the code under test, is at fault,
// and no concurrent run can be judged against it.
var ErrNotDeterministic = errors.New("the workload is not deterministic")

// Counters loads the workload, starts the server with statistics on, learns
// each counter's per-request delta from two serial phases that must agree,
// then serves Requests concurrently and records how much each counter grew.
// The server is stopped on every path.
func Counters(ctx context.Context, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	srv, err := start(ctx, opt, false)
	if err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	defer srv.Stop() // on the paths that fail; a no-op after the stop below
	res := &Result{Threads: opt.Threads, Connections: opt.Connections, Requests: opt.Requests, Serial: opt.Serial}

	s0, err := snapshot(ctx, srv)
	if err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	res.PID = s0.PID
	// Reading the counters must not move them, or every phase's delta would
	// carry the reads.
	s0b, err := snapshot(ctx, srv)
	if err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	if d := nonZero(delta(s0, s0b)); len(d) > 0 {
		return nil, fmt.Errorf("counters: reading the counters moved %s: %w", strings.Join(d, ", "), ErrNotDeterministic)
	}

	var phases [2]map[string]int64
	prev := s0b
	for i := range phases {
		opt.Step(fmt.Sprintf("serial phase %d: %d requests over 1 connection", i+1, opt.Serial))
		if err := serve(ctx, srv, opt.Serial, 1, opt.Timeout); err != nil {
			return nil, fmt.Errorf("counters: serial phase %d: %w", i+1, err)
		}
		s, err := snapshot(ctx, srv)
		if err != nil {
			return nil, fmt.Errorf("counters: %w", err)
		}
		phases[i], prev = delta(prev, s), s
	}
	res.PerRequest = map[string]int64{}
	var unstable []string
	for _, name := range slices.Sorted(maps.Keys(phases[0])) {
		a, b := phases[0][name], phases[1][name]
		if a != b || a%int64(opt.Serial) != 0 {
			unstable = append(unstable, fmt.Sprintf("%s (+%d, then +%d in %d requests)", name, a, b, opt.Serial))
			continue
		}
		res.PerRequest[name] = a / int64(opt.Serial)
	}
	if len(unstable) > 0 {
		return nil, fmt.Errorf("counters: serial phases disagree on %s: %w", strings.Join(unstable, ", "), ErrNotDeterministic)
	}

	dbBefore, err := opt.DB.StatusCounter(ctx, "Connections")
	if err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	opt.Step(fmt.Sprintf("concurrent phase: %d requests over %d connections, %d PHP threads", opt.Requests, opt.Connections, opt.Threads))
	start := time.Now()
	if err := serve(ctx, srv, opt.Requests, opt.Connections, opt.Timeout); err != nil {
		return nil, fmt.Errorf("counters: concurrent phase: %w", err)
	}
	res.DurationMS = time.Since(start).Milliseconds()
	s3, err := snapshot(ctx, srv)
	if err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	dbAfter, err := opt.DB.StatusCounter(ctx, "Connections")
	if err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	// The status query's own connection is counted too.
	res.DBConnections = dbAfter - dbBefore - 1
	res.Grew = delta(prev, s3)
	res.CPUs = countCPUs(s3.CPUs)
	for _, s := range []stats{s0b, prev, s3} {
		if s.PID != res.PID {
			return nil, fmt.Errorf("counters: the counters moved from process %d to %d: the server restarted its child", res.PID, s.PID)
		}
	}
	// The server's teardown is part of what ran: the stop comes before the
	// result, so that a crash in it is counted.
	if err := srv.Stop(); err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	res.ChildSignals, res.ChildSignalsRead = srv.ChildSignals()
	return res, nil
}

// Hammer serves Requests concurrently on a server started with opt.Environ
// (a sanitizer's runtime), checking every response, and stops the server,
// so that what the sanitizer found at exit is written too.
func Hammer(ctx context.Context, opt Options) error {
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return fmt.Errorf("hammer: %w", err)
	}
	srv, err := start(ctx, opt, true)
	if err != nil {
		return fmt.Errorf("hammer: %w", err)
	}
	opt.Step(fmt.Sprintf("%d requests over %d connections, %d PHP threads", opt.Requests, opt.Connections, opt.Threads))
	serr := serve(ctx, srv, opt.Requests, opt.Connections, opt.Timeout)
	if err := errors.Join(serr, srv.Stop()); err != nil {
		return fmt.Errorf("hammer: %w", err)
	}
	return nil
}

// ini is the server's php.ini settings: statistics on, memory statistics
// when asked for.
func (o Options) ini() map[string]string {
	ini := map[string]string{"mysqlnd.collect_statistics": "1", "mysqlnd.collect_memory_statistics": "0"}
	if o.MemoryStatistics {
		ini["mysqlnd.collect_memory_statistics"] = "1"
	}
	return ini
}

// start starts the workload's server; sanitized leaves OPcache out: PHP
// loads a zend_extension with RTLD_DEEPBIND, which a sanitizer's runtime
// refuses (the server exits at start-up), and OPcache's code is not
// instrumented, so the sanitizer would see nothing of it anyway.
func start(ctx context.Context, opt Options, sanitized bool) (*httpd.Server, error) {
	w := Workload()
	db := opt.DB.WithName("pp_counted")
	db.UseSocket = true
	opt.Step("loading the workload's 20 rows")
	if err := workload.Load(ctx, db, w); err != nil {
		return nil, err
	}
	opt.Step("starting Apache")
	srv, err := httpd.Start(ctx, httpd.Options{
		Placement: opt.Placement.WithBinds(docker.Bind{Path: filepath.Dir(db.Socket), ReadOnly: true}),
		Dir:       opt.Dir,
		Module:    opt.Module,
		Threads:   opt.Threads,
		Files:     w.Files,
		INI:       opt.ini(),
		Env: map[string]string{
			"PP_DB_SOCKET": db.Socket, "PP_DB_USER": db.User, "PP_DB_PASSWORD": db.Password, "PP_DB_NAME": db.Database,
		},
		Environ:   opt.Environ,
		Probe:     httpd.Probe{Path: w.Path, Check: w.Check},
		Log:       opt.Log,
		NoOPcache: sanitized,
	})
	return srv, err
}

// serve sends n requests over conns kept-alive connections; every one must
// succeed, or the counters cannot be judged.
func serve(ctx context.Context, srv *httpd.Server, n, conns int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := load.Fixed(ctx, srv.URL(Workload().Path), n, load.FixedOptions{Concurrency: conns})
	if err != nil {
		return err
	}
	if r.Requests != int64(n) || r.NonSuccess != 0 {
		return fmt.Errorf("%d of %d requests answered, %d not 2xx", r.Requests, n, r.NonSuccess)
	}
	return nil
}

type stats struct {
	PID    int               `json:"pid"`
	CPUs   string            `json:"cpus"` // Cpus_allowed_list, "" unknown
	Values map[string]string `json:"stats"`
}

// countCPUs counts the CPUs of a Linux CPU list ("0-3,8,10-11"); 0 when it
// cannot be read.
func countCPUs(list string) int {
	n := 0
	for part := range strings.SplitSeq(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// snapshot reads mysqlnd's counters through stats.php.
func snapshot(ctx context.Context, srv *httpd.Server) (stats, error) {
	var s stats
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL("/stats.php"), nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, fmt.Errorf("read the counters: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return s, fmt.Errorf("read the counters: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("read the counters: status %d: %.200s", resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, &s); err != nil || len(s.Values) == 0 {
		return s, fmt.Errorf("read the counters: not mysqli_get_client_stats(): %.200s", body)
	}
	for k, v := range s.Values {
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			return s, fmt.Errorf("read the counters: %s = %q", k, v)
		}
	}
	return s, nil
}

// delta is b - a for every counter of b.
func delta(a, b stats) map[string]int64 {
	d := make(map[string]int64, len(b.Values))
	for k, v := range b.Values {
		x, _ := strconv.ParseUint(v, 10, 64)
		y, _ := strconv.ParseUint(a.Values[k], 10, 64)
		d[k] = int64(x - y)
	}
	return d
}

func nonZero(d map[string]int64) []string {
	var names []string
	for _, k := range slices.Sorted(maps.Keys(d)) {
		if d[k] != 0 {
			names = append(names, fmt.Sprintf("%s by %d", k, d[k]))
		}
	}
	return names
}
