// Command patchproof validates a php-src change before it lands and posts the
// evidence on the pull request. See README.md for the manual.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := patchproof(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	os.Exit(exitCode(os.Stderr, err))
}
