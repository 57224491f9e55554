// Package callgrind counts the instructions a server executes over an exact
// window of requests, with valgrind's callgrind.
//
// The server runs under [Wrap], which makes callgrind dump its counters and
// reset them whenever a thread enters [MarkerFunction] (--dump-before).
// The workload never calls it; the marker page ([MarkerPHP]) does, through
// PHP's usleep(0). A window of N requests is then: request the marker twice
// (the second dump holds one marker request: the overhead), send the N
// requests, request the marker again; the third dump minus the second is
// what the N requests cost, whole server, every thread.
//
// Dumps need no signal and no vgdb (which cannot interrupt Apache's
// blocked threads here) and no exit: the dump files are written by the
// server process while it runs. Run as root, Apache's child switches to
// www-data, so the output directory must be writable by it ([PrepareDir]);
// callgrind's own final dump at exit, to a file it opened as root, fails
// and does not matter.
package callgrind

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"
)

// MarkerFunction is the function whose entry makes callgrind dump: libc's
// usleep, which PHP's usleep() calls and neither Apache nor PHP's request
// path does. It is a dynamic symbol of libc, so a stripped PHP build works
// too.
const MarkerFunction = "usleep"

// MarkerPHP is the marker page.
func MarkerPHP() []byte {
	return []byte("<?php\n// patchproof: callgrind dumps its counters as this page calls usleep().\nusleep(0);\necho \"mark\\n\";\n")
}

// outPrefix is the dump files' name before ".<pid>.<n>".
const outPrefix = "callgrind.out"

// Wrap returns the command line that runs a program under callgrind with
// dumps in outDir; valgrind is the valgrind binary ("" for PATH's).
func Wrap(valgrind, outDir string) []string {
	if valgrind == "" {
		valgrind = "valgrind"
	}
	return []string{valgrind,
		"--tool=callgrind",
		"--callgrind-out-file=" + filepath.Join(outDir, outPrefix+".%p"),
		"--dump-before=" + MarkerFunction,
		// vgdb would add a poll to every thread's scheduling; nothing here
		// talks to it.
		"--vgdb=no",
		// Instructions are all this measures: no cache or branch simulation.
		"--cache-sim=no", "--branch-sim=no",
	}
}

// PrepareDir creates dir, mode 1777, so that a server that switches to
// another user can write its dumps there.
func PrepareDir(dir string) error {
	// The server's code writes there: a link at its name is removed,
	// never followed by the chmod.
	if err := safefs.Dir(dir, 0o1777|os.ModeSticky); err != nil {
		return fmt.Errorf("prepare callgrind directory: %w", err)
	}
	return nil
}

// A Dump is one of callgrind's dumps.
type Dump struct {
	Path string
	PID  int
	Seq  int // 1 for the first dump of a process
	// Instructions is the Ir total of the dump: what all threads executed
	// since the previous dump (or the start).
	Instructions uint64
	// Trigger is callgrind's reason for the dump ("--dump-before=usleep").
	Trigger string
}

// ErrIncomplete is wrapped when a dump file is still being written.
var ErrIncomplete = errors.New("dump incomplete")

// ReadDump reads a dump's header and totals. A file without its totals
// line is still being written: an error wrapping ErrIncomplete.
func ReadDump(path string) (Dump, error) {
	// The server's user writes the dump: no link as its name.
	f, err := safefs.OpenPath(path)
	if err != nil {
		return Dump{}, fmt.Errorf("read callgrind dump: %w", err)
	}
	defer f.Close()
	d := Dump{Path: path}
	var events []string
	var totals []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "events:"):
			events = strings.Fields(strings.TrimPrefix(line, "events:"))
		case strings.HasPrefix(line, "totals:"):
			totals = strings.Fields(strings.TrimPrefix(line, "totals:"))
		case strings.HasPrefix(line, "pid:"):
			d.PID, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid:")))
		case strings.HasPrefix(line, "part:"):
			d.Seq, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "part:")))
		case strings.HasPrefix(line, "desc: Trigger:"):
			d.Trigger = strings.TrimSpace(strings.TrimPrefix(line, "desc: Trigger:"))
		}
	}
	if err := sc.Err(); err != nil {
		return Dump{}, fmt.Errorf("read callgrind dump %s: %w", path, err)
	}
	if totals == nil {
		return Dump{}, fmt.Errorf("read callgrind dump %s: %w", path, ErrIncomplete)
	}
	i := slices.Index(events, "Ir")
	if i < 0 || i >= len(totals) {
		return Dump{}, fmt.Errorf("read callgrind dump %s: no Ir among events %v", path, events)
	}
	d.Instructions, err = strconv.ParseUint(totals[i], 10, 64)
	if err != nil {
		return Dump{}, fmt.Errorf("read callgrind dump %s: totals: %w", path, err)
	}
	return d, nil
}

// Dumps returns the complete numbered dumps in dir, in order. An
// incomplete one ends the list: later ones cannot be complete either.
func Dumps(dir string) ([]Dump, error) {
	paths, err := filepath.Glob(filepath.Join(dir, outPrefix+".*.*"))
	if err != nil {
		return nil, err
	}
	var ds []Dump
	for _, p := range paths {
		d, err := ReadDump(p)
		if errors.Is(err, ErrIncomplete) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b Dump) int {
		if a.PID != b.PID {
			return a.PID - b.PID
		}
		return a.Seq - b.Seq
	})
	return ds, nil
}

// WaitDumps waits until dir holds n complete dumps and returns them; more
// than n is an error (something else called the marker function).
func WaitDumps(ctx context.Context, dir string, n int) ([]Dump, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ds, err := Dumps(dir)
		if err != nil {
			return nil, err
		}
		switch {
		case len(ds) == n:
			return ds, nil
		case len(ds) > n:
			return ds, fmt.Errorf("callgrind: %d dumps in %s, want %d: something other than the marker page called %s", len(ds), dir, n, MarkerFunction)
		}
		select {
		case <-ctx.Done():
			return ds, fmt.Errorf("callgrind: waiting for dump %d of %s: %w (is %s reached? a build without libc's usleep symbol cannot be measured)", n, dir, ctx.Err(), MarkerFunction)
		case <-tick.C:
		}
	}
}
