package lockcount

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/patchproof/patchproof/internal/safefs"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Counts are the calls on one mutex.
type Counts struct {
	Lock, Trylock uint64
}

// A MutexCounts is one mutex's record in a table: its calls and the
// threads that made them.
type MutexCounts struct {
	Counts
	// FirstThread is the kernel thread id (gettid) of the thread that
	// first locked or trylocked the mutex; 0 for a slot whose first call
	// has been counted but whose thread is not yet written.
	FirstThread int
	// Shared says another thread has locked or trylocked it since: the
	// mutex is one that threads may contend on. Threads are told apart by
	// id, so a per-thread mutex outlives its thread as a shared one if a
	// new thread locks it (see lockcount.c).
	Shared bool
}

// A Table is one process's counts.
type Table struct {
	// Name identifies the table across snapshots: the file name without
	// its .bin, "lockcount.<pid>.<start-ns>".
	Name  string
	PID   int
	Start time.Time
	// Mutexes maps a mutex address to its counts.
	Mutexes map[uint64]MutexCounts
	// Overflow counts calls on mutexes that found no free slot.
	Overflow Counts
}

// A Snapshot is every table in a directory at one moment, sorted by name.
type Snapshot struct {
	Tables []Table
}

// The table file's layout; see lockcount.c.
const (
	tableMagic   = "LOCKCNT1"
	tableVersion = 2
	headerSize   = 64
	slotSize     = 32
	flagShared   = 1
	tableSuffix  = ".bin"
	tablePrefix  = "lockcount."
)

// maxTable bounds a table file: a server's mutexes are a few hundred
// lines.
const maxTable = 16 << 20

// ErrNotTable is returned (wrapped) for a file that is not a whole table.
var ErrNotTable = errors.New("not a lock count table")

// ReadTable reads one table file.
func ReadTable(path string) (Table, error) {
	// The preloaded counter writes it in the server, as the server's user.
	b, err := safefs.ReadPath(path, maxTable)
	if err != nil {
		return Table{}, fmt.Errorf("read lock counts: %w", err)
	}
	t, err := decodeTable(b)
	if err != nil {
		return Table{}, fmt.Errorf("read lock counts %s: %w", path, err)
	}
	t.Name = strings.TrimSuffix(filepath.Base(path), tableSuffix)
	return t, nil
}

func decodeTable(b []byte) (Table, error) {
	le := binary.LittleEndian
	if len(b) < headerSize || string(b[:8]) != tableMagic {
		return Table{}, ErrNotTable
	}
	if v := le.Uint32(b[8:]); v != tableVersion {
		return Table{}, fmt.Errorf("%w: version %d", ErrNotTable, v)
	}
	slots := int(le.Uint32(b[12:]))
	if want := headerSize + slots*slotSize; len(b) != want {
		return Table{}, fmt.Errorf("%w: %d bytes, want %d", ErrNotTable, len(b), want)
	}
	t := Table{
		PID:      int(le.Uint64(b[16:])),
		Start:    time.Unix(0, int64(le.Uint64(b[24:]))),
		Overflow: Counts{Lock: le.Uint64(b[32:]), Trylock: le.Uint64(b[40:])},
		Mutexes:  map[uint64]MutexCounts{},
	}
	for s := b[headerSize:]; len(s) >= slotSize; s = s[slotSize:] {
		addr := le.Uint64(s)
		c := MutexCounts{
			Counts:      Counts{Lock: le.Uint64(s[8:]), Trylock: le.Uint64(s[16:])},
			FirstThread: int(le.Uint32(s[24:])),
			Shared:      le.Uint32(s[28:])&flagShared != 0,
		}
		// A slot is claimed before it is counted: skip it until it is.
		if addr != 0 && c.Counts != (Counts{}) {
			t.Mutexes[addr] = c
		}
	}
	return t, nil
}

// Read reads every table in dir. Counts of a process that is locking while
// they are read are a moment's, not a consistent cut: see [Settle].
func Read(dir string) (Snapshot, error) {
	paths, err := filepath.Glob(filepath.Join(dir, tablePrefix+"*"+tableSuffix))
	if err != nil {
		return Snapshot{}, fmt.Errorf("read lock counts: %w", err)
	}
	slices.Sort(paths)
	var s Snapshot
	for _, p := range paths {
		t, err := ReadTable(p)
		if errors.Is(err, ErrNotTable) {
			// A process is creating it right now; it has counted nothing.
			continue
		}
		if err != nil {
			return Snapshot{}, err
		}
		s.Tables = append(s.Tables, t)
	}
	return s, nil
}

// Settle reads dir until two reads quiet apart agree, so that the counts
// of the calls that follow a request's response (logging, cleanup) are in,
// and returns that snapshot. It gives up with ctx.
func Settle(ctx context.Context, dir string, quiet time.Duration) (Snapshot, error) {
	prev, err := Read(dir)
	if err != nil {
		return Snapshot{}, err
	}
	t := time.NewTicker(quiet)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return Snapshot{}, fmt.Errorf("settle lock counts: %w", ctx.Err())
		case <-t.C:
		}
		cur, err := Read(dir)
		if err != nil {
			return Snapshot{}, err
		}
		if equalSnapshots(prev, cur) {
			return cur, nil
		}
		prev = cur
	}
}

func equalSnapshots(a, b Snapshot) bool {
	return slices.EqualFunc(a.Tables, b.Tables, func(x, y Table) bool {
		return x.Name == y.Name && x.Overflow == y.Overflow && maps.Equal(x.Mutexes, y.Mutexes)
	})
}

// ParseDump reads the text dump a process writes at exit: a "# lockcount
// pid N" line, "address locks trylocks first-thread shared" lines (shared
// 0 or 1), "overflow locks trylocks" and "total locks trylocks", which
// must add up. The table's Name is left empty.
func ParseDump(r io.Reader) (Table, error) {
	t := Table{Mutexes: map[uint64]MutexCounts{}}
	var sum, total Counts
	haveTotal := false
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if pid, ok := strings.CutPrefix(text, "# lockcount pid "); ok {
			var err error
			if t.PID, err = strconv.Atoi(pid); err != nil {
				return Table{}, fmt.Errorf("lock count dump:%d: %w", line, err)
			}
			continue
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		label := f[0] == "total" || f[0] == "overflow"
		if label && len(f) != 3 {
			return Table{}, fmt.Errorf("lock count dump:%d: %q: want three fields", line, text)
		}
		if !label && len(f) != 5 {
			return Table{}, fmt.Errorf("lock count dump:%d: %q: want five fields", line, text)
		}
		var c Counts
		var err error
		if c.Lock, err = strconv.ParseUint(f[1], 10, 64); err == nil {
			c.Trylock, err = strconv.ParseUint(f[2], 10, 64)
		}
		if err != nil {
			return Table{}, fmt.Errorf("lock count dump:%d: %w", line, err)
		}
		switch f[0] {
		case "total":
			total, haveTotal = c, true
			continue
		case "overflow":
			t.Overflow = c
		default:
			addr, err := strconv.ParseUint(f[0], 0, 64)
			if err != nil {
				return Table{}, fmt.Errorf("lock count dump:%d: address: %w", line, err)
			}
			tid, err := strconv.ParseUint(f[3], 10, 32)
			if err != nil {
				return Table{}, fmt.Errorf("lock count dump:%d: first thread: %w", line, err)
			}
			if f[4] != "0" && f[4] != "1" {
				return Table{}, fmt.Errorf("lock count dump:%d: shared %q: want 0 or 1", line, f[4])
			}
			if c != (Counts{}) {
				t.Mutexes[addr] = MutexCounts{Counts: c, FirstThread: int(tid), Shared: f[4] == "1"}
			}
		}
		sum.Lock += c.Lock
		sum.Trylock += c.Trylock
	}
	if err := sc.Err(); err != nil {
		return Table{}, fmt.Errorf("lock count dump: %w", err)
	}
	if !haveTotal {
		return Table{}, errors.New("lock count dump: no total line: truncated")
	}
	if sum != total {
		return Table{}, fmt.Errorf("lock count dump: lines add up to %+v, total says %+v", sum, total)
	}
	return t, nil
}
