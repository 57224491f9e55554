package lockcount

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func needGCC(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
}

// locker runs testdata/locker.c under the counting library and speaks its
// line protocol.
type locker struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
	pid     int
	shared  uint64
	private []uint64
	try     uint64
	stats   uint64
}

const (
	threads  = 4
	sharedN  = 1000
	privateN = 500
	tries    = 7
)

// build compiles the library and the locker into a directory anyone may
// read, so that the locker can also run as nobody.
func build(t *testing.T) (so, bin string) {
	t.Helper()
	needGCC(t)
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	so, err := Build(context.Background(), "", filepath.Join(dir, "lib"))
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "locker")
	if out, err := exec.Command("gcc", "-O0", "-pthread", "-o", bin, filepath.Join("testdata", "locker.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc locker: %v\n%s", err, out)
	}
	return so, bin
}

func startLocker(t *testing.T, so, bin, dir string, cred *syscall.Credential) *locker {
	t.Helper()
	cmd := exec.Command(bin, strconv.Itoa(threads), strconv.Itoa(sharedN), strconv.Itoa(privateN), strconv.Itoa(tries))
	cmd.Env = append(os.Environ(), Env(so, dir)...)
	cmd.Stderr = os.Stderr
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	l := &locker{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	for {
		f := l.line()
		switch f[0] {
		case "pid":
			l.pid, _ = strconv.Atoi(f[1])
		case "shared":
			l.shared = addr(t, f[1])
		case "private":
			l.private = append(l.private, addr(t, f[1]))
		case "try":
			l.try = addr(t, f[1])
		case "stats":
			l.stats = addr(t, f[1])
		case "ready":
			return l
		}
	}
}

func (l *locker) line() []string {
	l.t.Helper()
	if !l.out.Scan() {
		l.t.Fatalf("locker ended early: %v", l.out.Err())
	}
	return strings.Fields(l.out.Text())
}

func (l *locker) send(cmd string) []string {
	l.t.Helper()
	if _, err := fmt.Fprintln(l.in, cmd); err != nil {
		l.t.Fatal(err)
	}
	return l.line()
}

func addr(t *testing.T, s string) uint64 {
	t.Helper()
	a, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func settle(t *testing.T, dir string) Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Settle(ctx, dir, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// names names the locker's own mutexes by address.
func (l *locker) names() map[uint64]string {
	names := map[uint64]string{l.shared: "shared", l.try: "try"}
	for i, p := range l.private {
		names[p] = fmt.Sprintf("private%d", i)
	}
	return names
}

// known returns the calls on the locker's own mutexes in d.
func (l *locker) known(d Delta, table string) map[string]MutexCalls {
	got := map[string]MutexCalls{}
	names := l.names()
	for _, m := range d.Mutexes {
		if n, ok := names[m.Addr]; ok && m.Table == table {
			m.Mutex = Mutex{}
			got[n] = m
		}
	}
	return got
}

// others returns the lock calls in d on mutexes that are neither the
// locker's own (in table) nor child (the C library may lock some of its
// own), as Split and SharedMutexes count them.
func (l *locker) others(d Delta, table string, child Mutex) (shared, perThread uint64, sharedMutexes int) {
	names := l.names()
	for _, m := range d.Mutexes {
		if _, ok := names[m.Addr]; (ok && m.Table == table) || m.Mutex == child {
			continue
		}
		if m.Shared {
			shared += m.Lock
			sharedMutexes++
		} else {
			perThread += m.Lock
		}
	}
	return shared, perThread, sharedMutexes
}

// wantKnown is the calls on the locker's own mutexes after rounds runs,
// in one window. The shared mutex is shared from the start; a thread's own
// mutex becomes shared in the second run, whose new threads lock the same
// mutexes as the first's.
func wantKnown(rounds uint64) map[string]MutexCalls {
	want := map[string]MutexCalls{
		"shared": {Counts: Counts{Lock: rounds * threads * sharedN}, Shared: true},
		"try":    {Counts: Counts{Trylock: rounds * tries}},
	}
	for i := range threads {
		want[fmt.Sprintf("private%d", i)] = MutexCalls{Counts: Counts{Lock: rounds * privateN}, Shared: rounds > 1}
	}
	return want
}

// checkSplit checks d's split of lock calls over the locker's mutexes
// (those of its table) in a window of one run, round its number, and a
// forked child's mutex, locked childN times by the child's one thread (a
// zero Mutex when no child forked).
func (l *locker) checkSplit(t *testing.T, d Delta, table string, round int, child Mutex, childN uint64) {
	t.Helper()
	shared, perThread := d.Split()
	if shared+perThread != d.Locks-d.Overflow.Lock {
		t.Errorf("Split() = %d shared + %d per-thread, want %d lock calls", shared, perThread, d.Locks-d.Overflow.Lock)
	}
	oShared, oPerThread, oMutexes := l.others(d, table, child)
	wantShared, wantPerThread, wantMutexes := uint64(threads*sharedN), uint64(threads*privateN), 1
	if round > 1 {
		// The second run's threads lock the first's own mutexes.
		wantShared, wantPerThread, wantMutexes = threads*(sharedN+privateN), 0, 1+threads
	}
	wantPerThread += childN
	if shared-oShared != wantShared || perThread-oPerThread != wantPerThread || d.SharedMutexes()-oMutexes != wantMutexes {
		t.Errorf("run %d: Split() = %d shared, %d per-thread, %d shared mutexes; "+
			"less the others' %d, %d and %d: want %d, %d and %d",
			round, shared, perThread, d.SharedMutexes(), oShared, oPerThread, oMutexes, wantShared, wantPerThread, wantMutexes)
	}
	t.Logf("run %d: %d lock calls on %d shared mutexes, %d on per-thread ones; not the locker's: %d shared on %d, %d per-thread",
		round, shared, d.SharedMutexes(), perThread, oShared, oMutexes, oPerThread)
}

// checkThreads checks who first locked the locker's mutexes in tb, after
// its first run: each thread its own, one of them the shared mutex, the
// main thread the try mutex.
func (l *locker) checkThreads(t *testing.T, tb Table) {
	t.Helper()
	first := map[int]bool{}
	for i, p := range l.private {
		tid := tb.Mutexes[p].FirstThread
		if tid == 0 || tid == l.pid || first[tid] {
			t.Errorf("private%d first locked by thread %d; want a thread of its own, not the main thread %d", i, tid, l.pid)
		}
		first[tid] = true
	}
	if tid := tb.Mutexes[l.shared].FirstThread; !first[tid] {
		t.Errorf("shared first locked by thread %d; want one of the workers %v", tid, first)
	}
	if tid := tb.Mutexes[l.try].FirstThread; tid != l.pid {
		t.Errorf("try first locked by thread %d; want the main thread %d", tid, l.pid)
	}
}

// TestCount counts two windows of a running program, by snapshots, and
// then reads the dumps it and its forked child wrote at exit.
func TestCount(t *testing.T) {
	so, bin := build(t)
	dir := filepath.Join(t.TempDir(), "counts")
	if err := PrepareDir(dir); err != nil {
		t.Fatal(err)
	}
	l := startLocker(t, so, bin, dir, nil)

	before := settle(t, dir)
	if len(before.Tables) != 1 || before.Tables[0].PID != l.pid {
		t.Fatalf("before the window: tables %+v, want one for pid %d", before.Tables, l.pid)
	}
	table := before.Tables[0].Name
	if f := l.send("run"); f[0] != "done" {
		t.Fatalf("locker said %q", f)
	}
	after := settle(t, dir)
	d, err := Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantKnown(1), l.known(d, table)); diff != "" {
		t.Errorf("calls on the known mutexes (-want +got):\n%s", diff)
	}
	// glibc may lock mutexes of its own; the known ones are the floor.
	top, _ := d.Top()
	if d.Locks < threads*(sharedN+privateN) || d.Trylocks < tries || top.Addr != l.shared ||
		top.Lock != threads*sharedN || d.Distinct() < threads+2 || d.Processes != 1 || len(d.Warnings) != 0 {
		t.Errorf("window: %d locks, %d trylocks, top %v, %d distinct, %d processes, warnings %q",
			d.Locks, d.Trylocks, top, d.Distinct(), d.Processes, d.Warnings)
	}
	t.Logf("window: %d locks, %d trylocks, top %v with %d, %d distinct", d.Locks, d.Trylocks, top.Mutex, top.Lock, d.Distinct())
	l.checkSplit(t, d, table, 1, Mutex{}, 0)
	l.checkThreads(t, after.Tables[0])

	// A second window in which a child forks, counts in a table of its own
	// and exits.
	f := l.send("fork 300")
	if f[0] != "child" {
		t.Fatalf("locker said %q", f)
	}
	childPID, _ := strconv.Atoi(f[1])
	childMutex := addr(t, f[2])
	if f := l.send("run"); f[0] != "done" {
		t.Fatalf("locker said %q", f)
	}
	last := settle(t, dir)
	d, err = Diff(after, last)
	if err != nil {
		t.Fatal(err)
	}
	want := wantKnown(1)
	for i := range threads {
		// The second run's threads are not the first's.
		n := fmt.Sprintf("private%d", i)
		m := want[n]
		m.Shared = true
		want[n] = m
	}
	if diff := cmp.Diff(want, l.known(d, table)); diff != "" {
		t.Errorf("second window, parent's mutexes (-want +got):\n%s", diff)
	}
	var childTable Table
	for _, tb := range last.Tables {
		if tb.PID == childPID {
			childTable = tb
		}
	}
	l.checkSplit(t, d, table, 2, Mutex{childTable.Name, childMutex}, 300)
	var child []MutexCalls
	for _, m := range d.Mutexes {
		if m.Table != table {
			child = append(child, m)
		}
	}
	if len(child) != 1 || child[0].Addr != childMutex || child[0].Lock != 300 || child[0].Shared || d.Processes != 2 ||
		len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], fmt.Sprintf("(pid %d) appeared", childPID)) {
		t.Errorf("second window: child's mutexes %v, %d processes, warnings %q", child, d.Processes, d.Warnings)
	}

	// The dumps at exit hold both rounds.
	l.in.Close()
	if err := l.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	dump := readDump(t, filepath.Join(dir, table+".txt"))
	if dump.PID != l.pid {
		t.Errorf("dump pid %d, want %d", dump.PID, l.pid)
	}
	got := map[string]MutexCalls{}
	for a, n := range l.names() {
		got[n] = MutexCalls{Counts: dump.Mutexes[a].Counts, Shared: dump.Mutexes[a].Shared}
	}
	if diff := cmp.Diff(wantKnown(2), got); diff != "" {
		t.Errorf("exit dump (-want +got):\n%s", diff)
	}
	// The dump's threads are the table's.
	var parent Table
	for _, tb := range last.Tables {
		if tb.PID == l.pid {
			parent = tb
		}
	}
	for a, n := range l.names() {
		if d, tb := dump.Mutexes[a].FirstThread, parent.Mutexes[a].FirstThread; d != tb {
			t.Errorf("exit dump: %s first locked by thread %d, the table says %d", n, d, tb)
		}
	}
	// The child's one thread is not its parent's, whose id the library
	// knew before the fork.
	want1 := MutexCounts{Counts: Counts{Lock: 300}, FirstThread: childPID}
	if m := childTable.Mutexes[childMutex]; m != want1 {
		t.Errorf("child's table: %+v on %#x, want %+v", m, childMutex, want1)
	}
	if cd := readDump(t, filepath.Join(dir, childTable.Name+".txt")); cd.Mutexes[childMutex] != want1 {
		t.Errorf("child's dump: %+v, want %+v on %#x", cd, want1, childMutex)
	}
}

func readDump(t *testing.T, path string) Table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tb, err := ParseDump(f)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestCountAsAnotherUser runs the locker as nobody, as Apache runs its
// children as www-data: PrepareDir must let it create its table.
func TestCountAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run as nobody")
	}
	so, bin := build(t)
	dir := filepath.Join(filepath.Dir(filepath.Dir(so)), "counts")
	if err := PrepareDir(dir); err != nil {
		t.Fatal(err)
	}
	l := startLocker(t, so, bin, dir, &syscall.Credential{Uid: 65534, Gid: 65534})
	before := settle(t, dir)
	l.send("run")
	after := settle(t, dir)
	d, err := Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Tables) != 1 {
		t.Fatalf("tables %+v, want one", after.Tables)
	}
	if diff := cmp.Diff(wantKnown(1), l.known(d, after.Tables[0].Name)); diff != "" {
		t.Errorf("calls as nobody (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(dir, after.Tables[0].Name+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 {
		t.Errorf("table owned by uid %d, want nobody's", st.Uid)
	}
	// Root reads another user's memory, as it reads Apache's children's.
	if n, err := NameHeld(d, after, "locker_stats"); err != nil || n.Lock != threads*sharedN {
		t.Errorf("NameHeld as nobody: %+v, %v", n, err)
	}
}

// TestNoDir checks that without LOCKCOUNT_DIR the library only forwards.
func TestNoDir(t *testing.T) {
	so, bin := build(t)
	cmd := exec.Command(bin, "2", "10", "10", "1")
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+so)
	cmd.Stdin = strings.NewReader("run\n")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "done") {
		t.Errorf("locker without a directory: %v\n%s", err, out)
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build(context.Background(), "/nonexistent/gcc", t.TempDir()); err == nil {
		t.Error("Build with no gcc: no error")
	}
	needGCC(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, "", t.TempDir()); err == nil {
		t.Error("Build with a cancelled context: no error")
	}
}

func TestParseDump(t *testing.T) {
	got := readDump(t, filepath.Join("testdata", "dump.txt"))
	// The locker's one run: four threads, each locking the shared mutex
	// and its own; the main thread trylocking the try mutex.
	want := Table{
		PID: 13333,
		Mutexes: map[uint64]MutexCounts{
			0x5608dacfd120: {Counts: Counts{Lock: 4000}, FirstThread: 13334, Shared: true},
			0x5609103cd2a0: {Counts: Counts{Lock: 500}, FirstThread: 13334},
			0x5609103cd2c8: {Counts: Counts{Lock: 500}, FirstThread: 13335},
			0x5609103cd2f0: {Counts: Counts{Lock: 500}, FirstThread: 13336},
			0x5609103cd318: {Counts: Counts{Lock: 500}, FirstThread: 13337},
			0x5608dacfd160: {Counts: Counts{Trylock: 7}, FirstThread: 13333},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseDump (-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"0x10 1 0 5 0\n",                     // no total: truncated
		"0x10 1 0 5 0\ntotal 2 0\n",          // does not add up
		"0x10 1 0\ntotal 1 0\n",              // version 1's three fields
		"0x10 1 0 5\ntotal 1 0\n",            // four fields
		"zz 1 0 5 0\ntotal 1 0\n",            // bad address
		"0x10 1 0 x 0\ntotal 1 0\n",          // bad thread
		"0x10 1 0 -5 0\ntotal 1 0\n",         // negative thread
		"0x10 1 0 4294967296 0\ntotal 1 0\n", // thread beyond 32 bits
		"0x10 1 0 5 2\ntotal 1 0\n",          // shared neither 0 nor 1
		"0x10 1 0 5 yes\ntotal 1 0\n",
		"# lockcount pid x\ntotal 0 0\n", // bad pid
		"0x10 -1 0 5 0\ntotal -1 0\n",    // negative
		"overflow 1 1\ntotal 1 0\n",      // overflow counts in the total
		"overflow 1 1 5 0\ntotal 1 1\n",  // overflow has no thread
		"0x10 1 0 5 0\noverflow 2 0\ntotal 1 0\n",
	} {
		if _, err := ParseDump(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseDump(%q): no error", bad)
		}
	}
}

// slot is one slot of a table file, as lockcount.c writes it.
type slot struct {
	addr, locks, trylocks uint64
	tid, flags            uint32
}

// encodeTable writes a table file of the given version and slot size,
// pid 7, started at 1 s past the epoch, with 3 lock and 4 trylock calls
// in overflow.
func encodeTable(version uint32, slotSize int, slots []slot) []byte {
	le := binary.LittleEndian
	b := make([]byte, 64, 64+len(slots)*slotSize)
	copy(b, "LOCKCNT1")
	le.PutUint32(b[8:], version)
	le.PutUint32(b[12:], uint32(len(slots)))
	le.PutUint64(b[16:], 7)
	le.PutUint64(b[24:], 1e9)
	le.PutUint64(b[32:], 3)
	le.PutUint64(b[40:], 4)
	for _, s := range slots {
		rec := make([]byte, slotSize)
		le.PutUint64(rec, s.addr)
		le.PutUint64(rec[8:], s.locks)
		le.PutUint64(rec[16:], s.trylocks)
		if slotSize >= 32 {
			le.PutUint32(rec[24:], s.tid)
			le.PutUint32(rec[28:], s.flags)
		}
		b = append(b, rec...)
	}
	return b
}

func TestDecodeTable(t *testing.T) {
	slots := []slot{
		{addr: 0x10, locks: 5, tid: 100},                        // one thread's
		{addr: 0x20, locks: 9, trylocks: 1, tid: 100, flags: 1}, // shared
		{},                        // free
		{addr: 0x30, tid: 101},    // claimed, not yet counted
		{addr: 0x40, trylocks: 2}, // counted, its thread not yet written
		{addr: 0x50, locks: 1, tid: 102, flags: 2}, // a flag bit that is not shared's
	}
	for _, tc := range []struct {
		name    string
		file    []byte
		want    Table
		wantErr string // empty: no error; else ErrNotTable, and this text
	}{
		{
			name: "version 2",
			file: encodeTable(2, 32, slots),
			want: Table{
				PID:      7,
				Start:    time.Unix(1, 0),
				Overflow: Counts{Lock: 3, Trylock: 4},
				Mutexes: map[uint64]MutexCounts{
					0x10: {Counts: Counts{Lock: 5}, FirstThread: 100},
					0x20: {Counts: Counts{Lock: 9, Trylock: 1}, FirstThread: 100, Shared: true},
					0x40: {Counts: Counts{Trylock: 2}},
					0x50: {Counts: Counts{Lock: 1}, FirstThread: 102},
				},
			},
		},
		{
			name: "version 2, empty",
			file: encodeTable(2, 32, make([]slot, 4)),
			want: Table{PID: 7, Start: time.Unix(1, 0), Overflow: Counts{Lock: 3, Trylock: 4}, Mutexes: map[uint64]MutexCounts{}},
		},
		{name: "version 1", file: encodeTable(1, 24, slots), wantErr: "version 1"},
		{name: "version 3", file: encodeTable(3, 32, slots), wantErr: "version 3"},
		{name: "version 2 of version 1's slots", file: encodeTable(2, 24, slots), wantErr: "208 bytes, want 256"},
		{name: "truncated", file: encodeTable(2, 32, slots)[:100], wantErr: "100 bytes, want 256"},
		{name: "short header", file: encodeTable(2, 32, nil)[:63], wantErr: "not a lock count table"},
		{name: "no magic", file: append([]byte("LOCKCNT0"), encodeTable(2, 32, slots)[8:]...), wantErr: "not a lock count table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeTable(tc.file)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("decodeTable (-want +got):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, ErrNotTable) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("decodeTable: %v; want ErrNotTable saying %q", err, tc.wantErr)
			}
		})
	}
}

func TestReadTableErrors(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"lockcount.1.1.bin": "",
		"lockcount.2.1.bin": "LOCKCNT1" + strings.Repeat("\x00", 100),
		"lockcount.3.1.bin": "NOTMAGIC" + strings.Repeat("\x00", 100),
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadTable(path); !errors.Is(err, ErrNotTable) {
			t.Errorf("ReadTable(%s): %v, want ErrNotTable", name, err)
		}
	}
	// Read skips what is not (yet) a table.
	s, err := Read(dir)
	if err != nil || len(s.Tables) != 0 {
		t.Errorf("Read: %+v, %v; want no tables", s, err)
	}
}

func TestDiff(t *testing.T) {
	tb := func(name string, pid int, m map[uint64]MutexCounts, overflow Counts) Table {
		return Table{Name: name, PID: pid, Mutexes: m, Overflow: overflow}
	}
	// own is a mutex only thread tid has locked; shared one that others
	// have locked too.
	own := func(tid int, c Counts) MutexCounts { return MutexCounts{Counts: c, FirstThread: tid} }
	shared := func(tid int, c Counts) MutexCounts { return MutexCounts{Counts: c, FirstThread: tid, Shared: true} }
	before := Snapshot{Tables: []Table{
		tb("lockcount.10.1", 10, map[uint64]MutexCounts{0xa: own(100, Counts{Lock: 5}), 0xb: shared(100, Counts{Lock: 1, Trylock: 2})}, Counts{}),
		tb("lockcount.11.1", 11, map[uint64]MutexCounts{0xa: own(110, Counts{Lock: 7})}, Counts{}),
	}}
	for _, tc := range []struct {
		name    string
		after   Snapshot
		want    Delta
		wantErr bool
		// What Split and SharedMutexes say of the delta.
		shared, perThread uint64
		sharedMutexes     int
	}{
		{
			name:  "nothing happened",
			after: before,
			want:  Delta{},
		},
		{
			name: "calls, a new process, a vanished one, overflow",
			after: Snapshot{Tables: []Table{
				tb("lockcount.10.1", 10, map[uint64]MutexCounts{
					// Shared in the window: shared for all of it.
					0xa: shared(100, Counts{Lock: 105}),
					0xb: shared(100, Counts{Lock: 1, Trylock: 2}),
					0xc: own(101, Counts{Lock: 3}),
					// Shared, but no lock calls to split.
					0xd: shared(101, Counts{Trylock: 6}),
				}, Counts{Lock: 4}),
				tb("lockcount.12.1", 12, map[uint64]MutexCounts{0xa: own(120, Counts{Lock: 50})}, Counts{}),
			}},
			want: Delta{
				Locks:    157,
				Trylocks: 6,
				Mutexes: []MutexCalls{
					{Mutex: Mutex{"lockcount.10.1", 0xa}, Counts: Counts{Lock: 100}, Shared: true},
					{Mutex: Mutex{"lockcount.12.1", 0xa}, Counts: Counts{Lock: 50}},
					{Mutex: Mutex{"lockcount.10.1", 0xc}, Counts: Counts{Lock: 3}},
					{Mutex: Mutex{"lockcount.10.1", 0xd}, Counts: Counts{Trylock: 6}, Shared: true},
				},
				Overflow:  Counts{Lock: 4},
				Processes: 2,
				Warnings: []string{
					"table lockcount.10.1 is full: 4 lock and 0 trylock calls not put to a mutex",
					"table lockcount.12.1 (pid 12) appeared in the window",
					"table lockcount.11.1 (pid 11) vanished in the window",
				},
			},
			shared:        100,
			perThread:     53,
			sharedMutexes: 2,
		},
		{
			name: "a mutex shared before the window",
			after: Snapshot{Tables: []Table{
				tb("lockcount.10.1", 10, map[uint64]MutexCounts{0xa: own(100, Counts{Lock: 6}), 0xb: shared(100, Counts{Lock: 9, Trylock: 2})}, Counts{}),
				tb("lockcount.11.1", 11, map[uint64]MutexCounts{0xa: own(110, Counts{Lock: 7})}, Counts{}),
			}},
			want: Delta{
				Locks: 9,
				Mutexes: []MutexCalls{
					{Mutex: Mutex{"lockcount.10.1", 0xb}, Counts: Counts{Lock: 8}, Shared: true},
					{Mutex: Mutex{"lockcount.10.1", 0xa}, Counts: Counts{Lock: 1}},
				},
				Processes: 1,
			},
			shared:        8,
			perThread:     1,
			sharedMutexes: 1,
		},
		{
			name: "a count went down",
			after: Snapshot{Tables: []Table{
				tb("lockcount.10.1", 10, map[uint64]MutexCounts{0xa: own(100, Counts{Lock: 4}), 0xb: shared(100, Counts{Lock: 1, Trylock: 2})}, Counts{}),
			}},
			wantErr: true,
		},
		{
			name: "a mutex vanished",
			after: Snapshot{Tables: []Table{
				tb("lockcount.10.1", 10, map[uint64]MutexCounts{0xa: own(100, Counts{Lock: 5})}, Counts{}),
			}},
			wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Diff(before, tc.after)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Diff error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
			if sh, pt := got.Split(); sh != tc.shared || pt != tc.perThread {
				t.Errorf("Split() = %d, %d; want %d, %d", sh, pt, tc.shared, tc.perThread)
			}
			if n := got.SharedMutexes(); n != tc.sharedMutexes {
				t.Errorf("SharedMutexes() = %d, want %d", n, tc.sharedMutexes)
			}
		})
	}
}

// TestNameHeld names the shared mutex the way the benchmark names
// mysqlnd's: by the heap block a global pointer points to.
func TestNameHeld(t *testing.T) {
	so, bin := build(t)
	dir := filepath.Join(t.TempDir(), "counts")
	if err := PrepareDir(dir); err != nil {
		t.Fatal(err)
	}
	l := startLocker(t, so, bin, dir, nil)
	before := settle(t, dir)
	if f := l.send("run"); f[0] != "done" {
		t.Fatalf("locker said %q", f)
	}
	after := settle(t, dir)
	d, err := Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}

	b, err := ReadPointee(l.pid, "locker_stats")
	if err != nil {
		t.Fatal(err)
	}
	// calloc(1, 24) is a 32-byte chunk with 24 usable bytes: values,
	// count and lock, and nothing of the values block next to it.
	if b.Addr != l.stats || len(b.Words) != 3 || b.Words[1] != 4 || b.Words[2] != l.shared ||
		!strings.HasSuffix(b.Object, "/locker") {
		t.Errorf("ReadPointee = %+v; want block %#x of [values 4 %#x] in the locker", b, l.stats, l.shared)
	}

	n, err := NameHeld(d, after, "locker_stats")
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Mutexes) != 1 || n.Mutexes[0].Addr != l.shared || n.Counts != (Counts{Lock: threads * sharedN}) || len(n.Blocks) != 1 {
		t.Errorf("NameHeld = %+v; want the shared mutex's %d locks", n, threads*sharedN)
	}
	// The try mutex is counted too, but no block holds it.
	if held := d.HeldBy(after.Tables[0].Name, Block{Words: []uint64{l.try}}); len(held) != 1 || held[0].Trylock != tries {
		t.Errorf("HeldBy the try mutex: %+v", held)
	}

	for _, tc := range []struct {
		symbol string
		is     error
		text   string
	}{
		{"no_such_symbol", ErrNoSymbol, ""},
		{"locker_null", nil, "NULL"},
	} {
		_, err := ReadPointee(l.pid, tc.symbol)
		if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("ReadPointee(%q): %v", tc.symbol, err)
		}
	}
	if _, err := NameHeld(Delta{}, after, "locker_stats"); err == nil {
		t.Error("NameHeld of an empty window: no error")
	}
}
