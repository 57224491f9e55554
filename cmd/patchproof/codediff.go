package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/codediff"
)

// codediffCmd is 'patchproof codediff'.
func codediffCmd(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("codediff", stdout)
	asJSON := fs.Bool("json", false, "print the report as JSON (the results.json form) instead of Markdown")
	objects := fs.String("objects", codediff.DefaultObjects, "object files to compare, a glob relative to BASE and HEAD")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := codediff.CheckObjects(*objects); err != nil {
		return &results.InputError{Input: "--objects " + *objects, Err: err}
	}
	if fs.NArg() != 2 {
		return fs.usageErrorf("want BASE and HEAD, got %d arguments", fs.NArg())
	}
	// In a child under limits, as a run compares: the objects are a
	// build's. What of HEAD's keeps them from being compared fails.
	rep, err := codediff.CompareConfined(ctx, fs.Arg(0), fs.Arg(1), codediff.Options{Objects: *objects})
	if errors.Is(err, codediff.ErrHeadRejected) {
		return results.CheckFailed("%v", err)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.Markdown(stdout)
	}
	if err != nil {
		return fmt.Errorf("codediff: write report: %w", err)
	}
	if n := len(rep.Changed); n > 0 {
		return results.CheckFailed("%d functions changed", n)
	}
	if n := len(rep.Added) + len(rep.Removed); n > 0 {
		return results.CheckFailed("%d functions added, %d removed", len(rep.Added), len(rep.Removed))
	}
	return nil
}
