package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/patchproof/patchproof/internal/ghactions"
	"github.com/patchproof/patchproof/internal/version"
	"github.com/patchproof/patchproof/pipeline/results"
)

// commands are the subcommands, in the order the usage lists them.
var commands = []string{"run", "codediff", "report", "doctor", "plan", "cache"}

// usage is the top-level help: each command's synopsis, as its manual
// states it (help.go).
var usage = func() string {
	var b strings.Builder
	b.WriteString("patchproof validates a php-src change before it lands.\n\nUsage:\n")
	for _, c := range commands {
		b.WriteString("  " + manuals[c].usage + "\n")
	}
	b.WriteString(`
  patchproof --version

Run 'patchproof COMMAND --help' for a command's manual: its flags,
examples, exit statuses and environment variables.
`)
	return b.String()
}()

// patchproof is the whole program: main only wires signals and exit codes.
func patchproof(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageErrorf("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return runCmd(ctx, stdout, stderr, rest)
	case "codediff":
		return codediffCmd(ctx, stdout, stderr, rest)
	case "report":
		return reportCmd(ctx, stdout, stderr, rest)
	case "doctor":
		return doctorCmd(ctx, stdout, stderr, rest)
	case "plan":
		return planCmd(ctx, stdout, stderr, rest)
	case "cache":
		return cacheCmd(ctx, stdout, stderr, rest)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "version", "--version", "-version":
		fmt.Fprintf(stdout, "patchproof %s\n", version.String())
		return nil
	}
	return usageErrorf("unknown command %q (see patchproof --help)", cmd)
}

// usageError marks bad input on the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error {
	return &usageError{fmt.Sprintf(format, a...)}
}

var errHelp = errors.New("help requested")

// exitCode maps an error to patchproof's exit statuses and prints it:
// 0 all checks passed, 1 a check failed, 2 patchproof could not run. An
// error's text may quote the tree under test (a check's reason, a build's
// failure): ghactions keeps it on the line patchproof starts, where it
// starts no workflow command of its own.
func exitCode(stderr io.Writer, err error) int {
	var ue *usageError
	var ae *annotatedError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ae):
		fmt.Fprintf(stderr, "::error::patchproof %s\n", ghactions.Message(oneLine(err)))
		return 2
	case errors.Is(err, results.ErrCheckFailed):
		fmt.Fprintf(stderr, "patchproof: %s\n", ghactions.Line(err.Error()))
		return 1
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "patchproof: %s\n", ghactions.Line(oneLine(err)))
		return 2
	default:
		fmt.Fprintf(stderr, "patchproof: %s\n", ghactions.Line(oneLine(err)))
		return 2
	}
}

func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
}
