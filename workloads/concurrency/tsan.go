package concurrency

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/internal/childenv"
)

// ErrNoTSan is wrapped when the ThreadSanitizer runtime cannot be found.
var ErrNoTSan = errors.New("ThreadSanitizer runtime not found")

// TSanRuntime returns the path of the compiler's ThreadSanitizer runtime
// (libtsan.so), which a TSan build of libphp.so needs in a server that was
// not itself built with -fsanitize=thread.
func TSanRuntime(ctx context.Context, cc string) (string, error) {
	if cc == "" {
		cc = "gcc"
	}
	cmd := exec.CommandContext(ctx, cc, "-print-file-name=libtsan.so")
	cmd.Env = childenv.For(childenv.Tool)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s -print-file-name=libtsan.so: %v: %w", cc, err, ErrNoTSan)
	}
	p := strings.TrimSpace(string(out))
	// gcc prints the bare name back when it has no such file.
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%s has no libtsan.so (install libtsan2): %w", cc, ErrNoTSan)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%s: %v: %w", p, err, ErrNoTSan)
	}
	return real, nil
}

// TSanEnviron is the server's environment for a TSan build: the runtime
// preloaded, so that it is initialised before apache2 loads libphp.so, and
// its reports written to logDir/tsan.PID. The server goes on after a
// report (halt_on_error=0) and exits as it would (exitcode=0): the reports
// are the finding, not the exit status.
func TSanEnviron(runtime, logDir string) []string {
	opts := []string{
		"log_path=" + filepath.Join(logDir, "tsan"),
		"halt_on_error=0",
		"exitcode=0",
		// A deeper history keeps the previous access's stack in more reports.
		"history_size=4",
		"second_deadlock_stack=1",
		// Apache's signal handlers are not the change's business.
		"report_signal_unsafe=0",
		// Debian has no llvm-symbolizer; binutils' addr2line names the frames.
		"allow_addr2line=1",
	}
	return []string{"LD_PRELOAD=" + runtime, "TSAN_OPTIONS=" + strings.Join(opts, " ")}
}

// PrepareTSanLogs makes logDir, writable by the server's unprivileged
// child, and empty of earlier reports.
func PrepareTSanLogs(logDir string) error {
	// The server's code writes there: a link it left at the name, or
	// among the reports, is removed, never followed.
	if err := safefs.Dir(logDir, 0o1777); err != nil {
		return err
	}
	return safefs.RemoveMatching(logDir, "tsan.*")
}

// maxTSanLogs bounds the reports read of one server: the racy fixture's
// ~35 distinct races, each reported many times, come to a few MB.
const maxTSanLogs = 256 << 20

// TSanLogs returns the reports the runtime wrote to logDir, every process's
// file concatenated in name order. The server's user writes them, under
// the tree's code: each is read beneath logDir (no link out of it) and all
// of them within maxTSanLogs.
func TSanLogs(logDir string) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(logDir, "tsan.*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	tree, err := safefs.OpenTree(logDir, maxTSanLogs)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	var all bytes.Buffer
	for _, f := range files {
		b, err := tree.ReadFile(filepath.Base(f))
		if err != nil {
			return nil, err
		}
		all.Write(b)
	}
	return all.Bytes(), nil
}
