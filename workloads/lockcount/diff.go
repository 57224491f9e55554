package lockcount

import (
	"cmp"
	"fmt"
	"slices"
)

// A Mutex is one mutex in one process: its table and its address there.
type Mutex struct {
	Table string
	Addr  uint64
}

func (m Mutex) String() string { return fmt.Sprintf("%s:%#x", m.Table, m.Addr) }

// A MutexCalls is the calls on one mutex in a window.
type MutexCalls struct {
	Mutex
	Counts
	// Shared is the mutex's flag at the window's end: a mutex that more
	// than one thread has locked at any time, in the window or before, is
	// shared for the whole window.
	Shared bool
}

// A Delta is what was counted between two snapshots.
type Delta struct {
	// Locks and Trylocks are all calls in the window, overflow included.
	Locks, Trylocks uint64
	// Mutexes has every mutex called in the window, most locked first.
	Mutexes []MutexCalls
	// Overflow counts the calls that could not be put to a mutex.
	Overflow Counts
	// Processes counts the tables with calls in the window.
	Processes int
	Warnings  []string
}

// Top returns the most-locked mutex of the window, or false if none was.
func (d Delta) Top() (MutexCalls, bool) {
	if len(d.Mutexes) == 0 {
		return MutexCalls{}, false
	}
	return d.Mutexes[0], true
}

// Distinct is the number of mutexes called in the window.
func (d Delta) Distinct() int { return len(d.Mutexes) }

// Split divides the window's pthread_mutex_lock calls, the calls that
// Locks counts, between shared mutexes (ones that more than one thread
// locks, which threads may contend on) and per-thread ones. Trylocks are
// left out, as they are of Locks per request; so are the overflow's lock
// calls, whose mutexes are unknown: shared+perThread is Locks less
// Overflow.Lock.
func (d Delta) Split() (shared, perThread uint64) {
	for _, m := range d.Mutexes {
		if m.Shared {
			shared += m.Lock
		} else {
			perThread += m.Lock
		}
	}
	return shared, perThread
}

// SharedMutexes is the number of shared mutexes called in the window,
// whether by lock or trylock calls.
func (d Delta) SharedMutexes() int {
	n := 0
	for _, m := range d.Mutexes {
		if m.Shared {
			n++
		}
	}
	return n
}

// Diff returns what was counted between before and after. A table that
// appears only in after counts from zero and is named in a warning (a
// process started in the window); one that vanished is too. A count that
// went down means the snapshots do not belong together: an error.
func Diff(before, after Snapshot) (Delta, error) {
	var d Delta
	prev := map[string]Table{}
	for _, t := range before.Tables {
		prev[t.Name] = t
	}
	seen := map[string]bool{}
	for _, t := range after.Tables {
		seen[t.Name] = true
		old, ok := prev[t.Name]
		if !ok {
			d.Warnings = append(d.Warnings, fmt.Sprintf("table %s (pid %d) appeared in the window", t.Name, t.PID))
		}
		called := false
		for addr, c := range t.Mutexes {
			o := old.Mutexes[addr].Counts
			if c.Lock < o.Lock || c.Trylock < o.Trylock {
				return Delta{}, fmt.Errorf("diff lock counts: %s:%#x went from %+v to %+v", t.Name, addr, o, c.Counts)
			}
			dc := Counts{Lock: c.Lock - o.Lock, Trylock: c.Trylock - o.Trylock}
			if dc == (Counts{}) {
				continue
			}
			called = true
			d.Mutexes = append(d.Mutexes, MutexCalls{Mutex: Mutex{t.Name, addr}, Counts: dc, Shared: c.Shared})
			d.Locks += dc.Lock
			d.Trylocks += dc.Trylock
		}
		for addr := range old.Mutexes {
			if _, ok := t.Mutexes[addr]; !ok {
				return Delta{}, fmt.Errorf("diff lock counts: %s:%#x vanished", t.Name, addr)
			}
		}
		if t.Overflow.Lock < old.Overflow.Lock || t.Overflow.Trylock < old.Overflow.Trylock {
			return Delta{}, fmt.Errorf("diff lock counts: %s: overflow went down", t.Name)
		}
		ov := Counts{Lock: t.Overflow.Lock - old.Overflow.Lock, Trylock: t.Overflow.Trylock - old.Overflow.Trylock}
		if ov != (Counts{}) {
			called = true
			d.Overflow.Lock += ov.Lock
			d.Overflow.Trylock += ov.Trylock
			d.Locks += ov.Lock
			d.Trylocks += ov.Trylock
			d.Warnings = append(d.Warnings, fmt.Sprintf("table %s is full: %d lock and %d trylock calls not put to a mutex", t.Name, ov.Lock, ov.Trylock))
		}
		if called {
			d.Processes++
		}
	}
	for _, t := range before.Tables {
		if !seen[t.Name] {
			d.Warnings = append(d.Warnings, fmt.Sprintf("table %s (pid %d) vanished in the window", t.Name, t.PID))
		}
	}
	slices.SortFunc(d.Mutexes, func(a, b MutexCalls) int {
		return cmp.Or(
			cmp.Compare(b.Lock, a.Lock),
			cmp.Compare(b.Trylock, a.Trylock),
			cmp.Compare(a.Table, b.Table),
			cmp.Compare(a.Addr, b.Addr))
	})
	return d, nil
}
