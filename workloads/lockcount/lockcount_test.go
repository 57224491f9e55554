package lockcount

import (
	"bufio"
	"context"
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

// known returns the calls on the locker's own mutexes in d.
func (l *locker) known(d Delta, table string) map[string]Counts {
	got := map[string]Counts{}
	names := map[uint64]string{l.shared: "shared", l.try: "try"}
	for i, p := range l.private {
		names[p] = fmt.Sprintf("private%d", i)
	}
	for _, m := range d.Mutexes {
		if n, ok := names[m.Addr]; ok && m.Table == table {
			got[n] = m.Counts
		}
	}
	return got
}

func wantKnown(rounds uint64) map[string]Counts {
	want := map[string]Counts{
		"shared": {Lock: rounds * threads * sharedN},
		"try":    {Trylock: rounds * tries},
	}
	for i := range threads {
		want[fmt.Sprintf("private%d", i)] = Counts{Lock: rounds * privateN}
	}
	return want
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
	if diff := cmp.Diff(wantKnown(1), l.known(d, table)); diff != "" {
		t.Errorf("second window, parent's mutexes (-want +got):\n%s", diff)
	}
	var child []MutexCalls
	for _, m := range d.Mutexes {
		if m.Table != table {
			child = append(child, m)
		}
	}
	if len(child) != 1 || child[0].Addr != childMutex || child[0].Lock != 300 || d.Processes != 2 ||
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
	got := map[string]Counts{
		"shared": dump.Mutexes[l.shared], "try": dump.Mutexes[l.try],
	}
	for i, p := range l.private {
		got[fmt.Sprintf("private%d", i)] = dump.Mutexes[p]
	}
	if diff := cmp.Diff(wantKnown(2), got); diff != "" {
		t.Errorf("exit dump (-want +got):\n%s", diff)
	}
	var childTable string
	for _, tb := range last.Tables {
		if tb.PID == childPID {
			childTable = tb.Name
		}
	}
	if cd := readDump(t, filepath.Join(dir, childTable+".txt")); cd.Mutexes[childMutex] != (Counts{Lock: 300}) {
		t.Errorf("child's dump: %+v, want 300 locks on %#x", cd, childMutex)
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
	want := Table{
		PID: 29176,
		Mutexes: map[uint64]Counts{
			0x565146063120: {Lock: 8000},
			0x565154ad82a0: {Lock: 1000},
			0x565154ad82c8: {Lock: 1000},
			0x565154ad82f0: {Lock: 1000},
			0x565154ad8318: {Lock: 1000},
			0x565146063160: {Trylock: 14},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseDump (-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"0x10 1 0\n",                     // no total: truncated
		"0x10 1 0\ntotal 2 0\n",          // does not add up
		"0x10 1\ntotal 1 0\n",            // two fields
		"zz 1 0\ntotal 1 0\n",            // bad address
		"# lockcount pid x\ntotal 0 0\n", // bad pid
		"0x10 -1 0\ntotal -1 0\n",        // negative
		"overflow 1 1\ntotal 1 0\n",      // overflow counts in the total
		"0x10 1 0\noverflow 2 0\ntotal 1 0\n",
	} {
		if _, err := ParseDump(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseDump(%q): no error", bad)
		}
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
	tb := func(name string, pid int, m map[uint64]Counts, overflow Counts) Table {
		return Table{Name: name, PID: pid, Mutexes: m, Overflow: overflow}
	}
	before := Snapshot{Tables: []Table{
		tb("lockcount.10.1", 10, map[uint64]Counts{0xa: {Lock: 5}, 0xb: {Lock: 1, Trylock: 2}}, Counts{}),
		tb("lockcount.11.1", 11, map[uint64]Counts{0xa: {Lock: 7}}, Counts{}),
	}}
	for _, tc := range []struct {
		name    string
		after   Snapshot
		want    Delta
		wantErr bool
	}{
		{
			name:  "nothing happened",
			after: before,
			want:  Delta{},
		},
		{
			name: "calls, a new process, a vanished one, overflow",
			after: Snapshot{Tables: []Table{
				tb("lockcount.10.1", 10, map[uint64]Counts{0xa: {Lock: 105}, 0xb: {Lock: 1, Trylock: 2}, 0xc: {Lock: 3}}, Counts{Lock: 4}),
				tb("lockcount.12.1", 12, map[uint64]Counts{0xa: {Lock: 50}}, Counts{}),
			}},
			want: Delta{
				Locks: 157,
				Mutexes: []MutexCalls{
					{Mutex{"lockcount.10.1", 0xa}, Counts{Lock: 100}},
					{Mutex{"lockcount.12.1", 0xa}, Counts{Lock: 50}},
					{Mutex{"lockcount.10.1", 0xc}, Counts{Lock: 3}},
				},
				Overflow:  Counts{Lock: 4},
				Processes: 2,
				Warnings: []string{
					"table lockcount.10.1 is full: 4 lock and 0 trylock calls not put to a mutex",
					"table lockcount.12.1 (pid 12) appeared in the window",
					"table lockcount.11.1 (pid 11) vanished in the window",
				},
			},
		},
		{
			name: "a count went down",
			after: Snapshot{Tables: []Table{
				tb("lockcount.10.1", 10, map[uint64]Counts{0xa: {Lock: 4}, 0xb: {Lock: 1, Trylock: 2}}, Counts{}),
			}},
			wantErr: true,
		},
		{
			name: "a mutex vanished",
			after: Snapshot{Tables: []Table{
				tb("lockcount.10.1", 10, map[uint64]Counts{0xa: {Lock: 5}}, Counts{}),
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
