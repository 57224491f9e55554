package lockcount

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/patchproof/patchproof/internal/safefs"
)

// Naming a mutex: the counter knows mutexes only by address, and a mutex
// that a program allocates (PHP's tsrm_mutex_alloc) has an address that
// no symbol names. What names it is the structure that holds it: a global
// pointer variable (mysqlnd_global_stats) points to a heap block, and one
// of that block's words is the mutex's address (its LOCK_access). So the
// owner is read from the live process: the symbol's address from the ELF
// file that defines it and the load address in /proc/PID/maps, the
// pointer's value and the block's extent from /proc/PID/mem. Reading
// another user's process needs CAP_SYS_PTRACE, which root has.

// ErrNoSymbol is returned (wrapped) when no object mapped into the
// process defines the symbol.
var ErrNoSymbol = errors.New("symbol not found")

// A Block is the heap block a global pointer variable points to in a
// running process.
type Block struct {
	PID    int
	Symbol string
	// Object is the mapped file that defines Symbol.
	Object string
	// Addr is the block's address: the pointer's value.
	Addr uint64
	// Words are the block's contents, eight bytes at a time.
	Words []uint64
}

// Holds reports whether one of the block's words is addr.
func (b Block) Holds(addr uint64) bool { return slices.Contains(b.Words, addr) }

// Block sizes outside these bounds mean the pointer does not point to the
// start of a malloc block.
const (
	minChunk = 16
	maxChunk = 1 << 16
)

// ReadPointee reads the heap block that the global pointer symbol points
// to in process pid. The block's extent comes from the size word glibc's
// malloc keeps just before every block it returns, so the words are the
// block's own and none of its neighbours'.
func ReadPointee(pid int, symbol string) (Block, error) {
	b := Block{PID: pid, Symbol: symbol}
	objs, err := mappedObjects(pid)
	if err != nil {
		return b, fmt.Errorf("read %s in pid %d: %w", symbol, pid, err)
	}
	var ptrAddr uint64
	for _, o := range objs {
		if a, ok := o.lookup(symbol); ok {
			b.Object, ptrAddr = o.path, a
			break
		}
	}
	if b.Object == "" {
		return b, fmt.Errorf("read %s in pid %d: %w", symbol, pid, ErrNoSymbol)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return b, fmt.Errorf("read %s in pid %d: %w", symbol, pid, err)
	}
	defer mem.Close()
	word := func(at uint64) (uint64, error) {
		var buf [8]byte
		if _, err := mem.ReadAt(buf[:], int64(at)); err != nil {
			return 0, err
		}
		return binary.LittleEndian.Uint64(buf[:]), nil
	}
	if b.Addr, err = word(ptrAddr); err != nil {
		return b, fmt.Errorf("read %s in pid %d at %#x: %w", symbol, pid, ptrAddr, err)
	}
	if b.Addr == 0 {
		return b, fmt.Errorf("read %s in pid %d: the pointer is NULL", symbol, pid)
	}
	size, err := word(b.Addr - 8)
	if err != nil {
		return b, fmt.Errorf("read %s in pid %d: block %#x: %w", symbol, pid, b.Addr, err)
	}
	// The low three bits are flags; an mmapped block has no use of the
	// next block's first word.
	const isMmapped = 2
	chunk := size &^ 7
	if b.Addr%16 != 0 || chunk < minChunk || chunk > maxChunk {
		return b, fmt.Errorf("read %s in pid %d: %#x is not a malloc block (size word %#x)", symbol, pid, b.Addr, size)
	}
	usable := chunk - 8
	if size&isMmapped != 0 {
		usable = chunk - 16
	}
	buf := make([]byte, usable&^7)
	if _, err := mem.ReadAt(buf, int64(b.Addr)); err != nil {
		return b, fmt.Errorf("read %s in pid %d: block %#x: %w", symbol, pid, b.Addr, err)
	}
	for i := 0; i+8 <= len(buf); i += 8 {
		b.Words = append(b.Words, binary.LittleEndian.Uint64(buf[i:]))
	}
	return b, nil
}

// A mappedObject is a file mapped into a process and where it was loaded.
type mappedObject struct {
	path string
	base uint64 // the address of the mapping of file offset 0
}

// mappedObjects lists the files mapped into pid from offset 0, in address
// order: the executable and its shared objects.
func mappedObjects(pid int) ([]mappedObject, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var objs []mappedObject
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fs := strings.Fields(sc.Text())
		if len(fs) != 6 || !strings.HasPrefix(fs[5], "/") || seen[fs[5]] {
			continue
		}
		off, err := strconv.ParseUint(fs[2], 16, 64)
		if err != nil || off != 0 {
			continue
		}
		start, _, _ := strings.Cut(fs[0], "-")
		base, err := strconv.ParseUint(start, 16, 64)
		if err != nil {
			continue
		}
		seen[fs[5]] = true
		objs = append(objs, mappedObject{path: fs[5], base: base})
	}
	return objs, sc.Err()
}

// lookup returns the run-time address of a defined symbol of o: its value
// plus the load bias, the mapping's base less the page of the first
// loadable segment (zero for an executable linked at a fixed address).
func (o mappedObject) lookup(symbol string) (uint64, bool) {
	f, err := safefs.OpenELF(o.path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var first *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && (first == nil || p.Off < first.Off) {
			first = p
		}
	}
	if first == nil {
		return 0, false
	}
	page := uint64(os.Getpagesize())
	bias := o.base - first.Vaddr&^(page-1)
	for _, syms := range []func() ([]elf.Symbol, error){f.DynamicSymbols, f.Symbols} {
		ss, err := syms()
		if err != nil {
			continue
		}
		for _, s := range ss {
			if s.Name == symbol && s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_OBJECT {
				return bias + s.Value, true
			}
		}
	}
	return 0, false
}

// HeldBy returns the calls in d on the mutexes of table (one process's)
// whose address is a word of b, most locked first: the mutexes the block
// holds.
func (d Delta) HeldBy(table string, b Block) []MutexCalls {
	var held []MutexCalls
	for _, m := range d.Mutexes {
		if m.Table == table && b.Holds(m.Addr) {
			held = append(held, m)
		}
	}
	return held
}

// Named is what the mutexes a global's heap block holds were called in a
// window, in every process that locked anything in it.
type Named struct {
	Symbol string
	// Blocks has the block read in each of those processes.
	Blocks []Block
	// Mutexes are the calls on the mutexes the blocks hold, most locked
	// first; none when the block holds no mutex or its mutex was not
	// locked in the window.
	Mutexes []MutexCalls
	Counts
}

// NameHeld reads symbol's block in every process with calls in d (after
// is the snapshot that ended the window, which gives their pids) and
// counts the calls on the mutexes it holds. The processes must still run.
func NameHeld(d Delta, after Snapshot, symbol string) (Named, error) {
	n := Named{Symbol: symbol}
	for _, t := range after.Tables {
		if !slices.ContainsFunc(d.Mutexes, func(m MutexCalls) bool { return m.Table == t.Name }) {
			continue
		}
		b, err := ReadPointee(t.PID, symbol)
		if err != nil {
			return n, fmt.Errorf("name the mutexes %s holds: %w", symbol, err)
		}
		n.Blocks = append(n.Blocks, b)
		for _, m := range d.HeldBy(t.Name, b) {
			n.Mutexes = append(n.Mutexes, m)
			n.Lock += m.Lock
			n.Trylock += m.Trylock
		}
	}
	if len(n.Blocks) == 0 {
		return n, fmt.Errorf("name the mutexes %s holds: no process locked anything in the window", symbol)
	}
	return n, nil
}
