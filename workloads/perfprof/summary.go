package perfprof

import (
	"cmp"
	"slices"
	"strings"
)

// A Symbol is a function and the samples charged to it.
type Symbol struct {
	Name    string  `json:"name"` // as in [Frame.Name]
	DSO     string  `json:"dso"`
	Samples int     `json:"samples"`
	Share   float64 `json:"share"` // of all the profile's samples, 0..1
}

// Top is the n functions with the most self samples (samples with the
// function as the leaf, on the CPU itself rather than in a callee), most
// first, ties by name and DSO. A function of one name in two DSOs is two
// symbols.
func (s *Stacks) Top(n int) []Symbol {
	counts := map[symbolKey]int{}
	for _, st := range s.Stacks {
		if len(st.Frames) == 0 {
			continue
		}
		leaf := st.Frames[len(st.Frames)-1]
		counts[symbolKey{leaf.Name, leaf.DSO}] += st.Count
	}
	syms := s.symbols(counts)
	if len(syms) > n {
		syms = syms[:n]
	}
	return syms
}

// Locks is the share of samples spent in lock functions (see lockPrefixes),
// and those functions by their samples, most first.
//
// A sample is lock time when its leaf is a lock function, or when its leaf
// is in the kernel and a lock function is among the kernel frames or the
// user frame that entered the kernel: a contended mutex's time is mostly
// the futex syscall's, whose leaf is a spinlock or the scheduler, not a
// function named for futexes. Such a sample is charged to its innermost
// lock function, so that the symbols' samples add up to the share.
func (s *Stacks) Locks() (share float64, syms []Symbol) {
	counts := map[symbolKey]int{}
	total := 0
	for _, st := range s.Stacks {
		if f, ok := lockFrame(st.Frames); ok {
			counts[symbolKey{f.Name, f.DSO}] += st.Count
			total += st.Count
		}
	}
	return s.share(total), s.symbols(counts)
}

// lockFrame is the innermost lock function of a stack's leaf: the leaf,
// and where the leaf is the kernel's, the kernel frames and the user frame
// under them.
func lockFrame(frames []Frame) (Frame, bool) {
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		if isLock(f) {
			return f, true
		}
		if !f.Kernel {
			break
		}
	}
	return Frame{}, false
}

// lockPrefixes name the functions whose time is taking or releasing a
// lock: glibc's mutex and rwlock entry points, their internal variants
// (three underscores, _usercnt, _full) and the low-level lock's futex
// wait and wake (__lll_lock_wait, lll_mutex_*). A name matches a prefix it
// starts with. They are what a ZTS PHP's mutexes (TSRM, mysqlnd's
// statistics), APR's and the libc's own end in, so that their sum is the
// server's lock time whichever lock is contended; the callers
// (tsrm_mutex_lock, apr_thread_mutex_lock) are thin wrappers whose own
// time is the call, and are left out so that a lock's time is counted
// once. In the kernel, every function with "futex" in its name is lock
// time (futex_wait, do_futex, __x64_sys_futex, futex_hash, ...): a server
// makes futex calls for little else than locks and condition variables.
var lockPrefixes = []string{
	"pthread_mutex_lock",
	"pthread_mutex_unlock",
	"pthread_mutex_trylock",
	"pthread_mutex_timedlock",
	"__pthread_mutex_lock", // and _full, _usercnt
	"__pthread_mutex_unlock",
	"__pthread_mutex_trylock",
	"__pthread_mutex_cond_lock", // a condition variable's wait taking its mutex back
	"___pthread_mutex_lock",
	"___pthread_mutex_unlock",
	"___pthread_mutex_trylock",
	"pthread_rwlock_",
	"__pthread_rwlock_",
	"___pthread_rwlock_",
	"pthread_spin_",
	"__lll_lock_wait", // and _private
	"__lll_lock_wake",
	"lll_mutex",
	"futex",
	"__futex",
	"do_futex",
}

// isLock reports whether f is a lock function. glibc's hidden aliases,
// "__GI_" and a name (__GI___lll_lock_wait), are the name.
func isLock(f Frame) bool {
	if f.Kernel {
		return strings.Contains(f.Name, "futex")
	}
	name := strings.TrimPrefix(f.Name, "__GI_")
	for _, p := range lockPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

type symbolKey struct{ name, dso string }

// symbols turns counts into symbols, most samples first, ties by name and
// DSO.
func (s *Stacks) symbols(counts map[symbolKey]int) []Symbol {
	syms := make([]Symbol, 0, len(counts))
	for k, n := range counts {
		syms = append(syms, Symbol{Name: k.name, DSO: k.dso, Samples: n, Share: s.share(n)})
	}
	slices.SortFunc(syms, func(a, b Symbol) int {
		return cmp.Or(cmp.Compare(b.Samples, a.Samples), strings.Compare(a.Name, b.Name), strings.Compare(a.DSO, b.DSO))
	})
	return syms
}

func (s *Stacks) share(n int) float64 {
	if s.Samples == 0 {
		return 0
	}
	return float64(n) / float64(s.Samples)
}
