// Command patchproof validates a php-src change before it lands and posts the
// evidence on the pull request. See README.md for the manual.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/patchproof/patchproof/internal/confine"
	"github.com/patchproof/patchproof/internal/proc"
	"github.com/patchproof/patchproof/internal/secretenv"
	"github.com/patchproof/patchproof/pipeline"
)

func main() {
	// First of all: where this process is a confined child (the parser of
	// a build's objects that codediff and abi start), it runs that job
	// and exits, with no secret to hold.
	confine.Main(pipeline.ConfinedJobs()...)
	// Then: the code a run starts is the same user as this process, and
	// could read its token from /proc. Hold executes patchproof again
	// without its secrets in the environment the kernel shows, holding
	// them, and makes the process not dumpable.
	if err := secretenv.Hold(); err != nil {
		fmt.Fprintf(os.Stderr, "patchproof: warning: %v\n", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// A run marks every process it starts, so that none outlives it: on
	// any exit, Ctrl-C included, what is left (a process that left its
	// group) is killed here; after a kill -9 of this process, the next run
	// with the same cache does it, whatever its --out (pipeline:
	// proc.ClaimRun). The mark is
	// process-wide, so it is set here, not where tests call patchproof.
	marked := len(os.Args) > 1 && os.Args[1] == "run"
	if marked {
		if err := proc.MarkChildren(); err != nil {
			fmt.Fprintf(os.Stderr, "patchproof: %v\n", err)
		}
	}
	err := patchproof(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	if marked {
		if left, serr := proc.Sweep(proc.Self().String()); len(left) > 0 || serr != nil {
			fmt.Fprintf(os.Stderr, "patchproof: stopped %d processes the run left behind %v\n", len(left), errOrEmpty(serr))
		}
	}
	os.Exit(exitCode(os.Stderr, err))
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return "(" + err.Error() + ")"
}
