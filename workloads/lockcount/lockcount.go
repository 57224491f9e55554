// Package lockcount counts pthread_mutex_lock calls per mutex in a running
// program, so that a benchmark can report lock calls per request: a count
// that, unlike CPU time, is exact and repeatable on a noisy machine.
//
// The counter is a small C library, lockcount.c (embedded; [Source]), that
// [Build] compiles with gcc and the program loads with LD_PRELOAD ([Env]).
// It interposes pthread_mutex_lock and pthread_mutex_trylock, forwards to
// the C library's through dlsym(RTLD_NEXT), and counts calls per mutex
// address in a fixed-size lock-free hash table. With each mutex it keeps
// the thread that first locked it and whether any other thread has since:
// a mutex locked by many threads (mysqlnd's global statistics, locked by
// every PHP thread) is one they may contend on; one locked only ever by
// its own thread is not.
//
// The table is not kept in the process's private memory: each process maps
// a file, LOCKCOUNT_DIR/lockcount.<pid>.<start-ns>.bin, and counts in it.
// Reading that file is the snapshot, at any moment and without the
// process's help: no signal to deliver (Apache's worker threads block
// them), no clean exit to wait for (Apache's children may be killed). A
// child after fork gets a table of its own; so does a new image after exec.
// At exit the library also writes a text dump next to the table, "address
// locks trylocks first-thread shared" lines and a total ([ParseDump] reads
// it).
//
// Counting a fixed window of N requests is then: [Settle] (read every table
// until the counts stop moving), send the N requests, Settle again, and
// [Diff] the two snapshots, which gives the total calls, the calls on the
// most-used mutex, the number of distinct mutexes in the window and how
// the lock calls split between shared and per-thread mutexes
// ([Delta.Split]).
//
// A mutex is known by its address alone. [NameHeld] names one by what
// holds it: the heap block that a global pointer variable (PHP's
// mysqlnd_global_stats) points to, read from the live process
// ([ReadPointee]), whose words include the address of the mutex it owns.
//
// The directory must be writable by the user the server runs as (www-data
// for Apache's children): [PrepareDir] makes it so.
package lockcount

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/internal/childenv"
)

// EnvDir is the environment variable that names the directory the tables
// go to; without it the library forwards calls and counts nothing.
const EnvDir = "LOCKCOUNT_DIR"

//go:embed lockcount.c
var source []byte

// Source returns the C source of the counting library.
func Source() []byte { return bytes.Clone(source) }

// Build compiles the counting library into outDir with gcc (the path of a
// gcc binary, or "" for gcc on PATH) and returns the absolute path of
// lockcount.so. The source is written next to it, so that compiler errors
// name outDir/lockcount.c and its line.
func Build(ctx context.Context, gcc, outDir string) (soPath string, err error) {
	if gcc == "" {
		gcc = "gcc"
	}
	dir, err := filepath.Abs(outDir)
	if err != nil {
		return "", fmt.Errorf("build lockcount: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build lockcount: %w", err)
	}
	src := filepath.Join(dir, "lockcount.c")
	if err := safefs.WritePath(src, source, 0o644); err != nil {
		return "", fmt.Errorf("build lockcount: %w", err)
	}
	so := filepath.Join(dir, "lockcount.so")
	// Build beside and rename, so a process that has the old library
	// mapped keeps a whole file.
	tmp := so + ".tmp"
	cmd := exec.CommandContext(ctx, gcc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra",
		"-o", tmp, src, "-ldl", "-pthread")
	cmd.Env = childenv.For(childenv.Tool)
	out, err := cmd.CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build lockcount: %s: %w\n%s", gcc, err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(tmp, so); err != nil {
		return "", fmt.Errorf("build lockcount: %w", err)
	}
	return so, nil
}

// Env returns the environment entries that load the library at soPath and
// send its tables to dir.
func Env(soPath, dir string) []string {
	return []string{"LD_PRELOAD=" + soPath, EnvDir + "=" + dir}
}

// PrepareDir creates dir, mode 1777 like /tmp, so that a server running as
// another user can create its tables there and no one can delete another's.
// The directories above it must let that user through.
func PrepareDir(dir string) error {
	// The mode set explicitly, past the umask; a link the server's code
	// left at the name is removed, never followed.
	if err := safefs.Dir(dir, 0o1777|os.ModeSticky); err != nil {
		return fmt.Errorf("prepare lock count directory: %w", err)
	}
	return nil
}
