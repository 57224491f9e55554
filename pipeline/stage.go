package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/pipeline/results"
)

// A Stage is one step of the pipeline. Timing, logging, skipping and log
// groups wrap it from outside (see middleware); a stage only does its work,
// reading what earlier stages left in the Run and adding its own. Needs
// declares the host tools it runs with cfg, for doctor.
type Stage interface {
	String() string
	Run(ctx context.Context, r *Run) error
	Needs(cfg *Config) []Need
}

// SkipError says a stage had nothing to do, and why. It is not a failure.
type SkipError struct {
	Reason string
}

func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// Skip returns a *SkipError.
func Skip(format string, a ...any) error { return &SkipError{Reason: fmt.Sprintf(format, a...)} }

// action is a stage's Run, possibly wrapped.
type action func(ctx context.Context, r *Run) error

// middleware wraps an action with cross-cutting behaviour.
type middleware func(s Stage, next action) action

// runStages runs stages in order. A stage that fails (a check) or errors (it
// could not run) does not stop the ones after it: each checks its own inputs
// and skips when an earlier stage left it nothing. Cancellation stops the
// run.
func runStages(ctx context.Context, r *Run, stages []Stage, mws ...middleware) {
	for _, s := range stages {
		if ctx.Err() != nil {
			// Not started: the run is incomplete, not this stage skipped.
			r.stageResult(s.String()).Status = results.StatusPending
			r.stageResult(s.String()).Reason = "cancelled"
			r.save()
			continue
		}
		a := action(s.Run)
		for i := len(mws) - 1; i >= 0; i-- {
			a = mws[i](s, a)
		}
		_ = a(ctx, r)
	}
}

// record stores a stage's status, duration and error in the Result, and
// writes results.json, after every stage.
func record(s Stage, next action) action {
	return func(ctx context.Context, r *Run) error {
		sr := r.stageResult(s.String())
		start := time.Now()
		sr.StartedAt = &start
		sr.Status = results.StatusRunning
		r.save()
		err := next(ctx, r)
		sr.DurationMS = time.Since(start).Milliseconds()
		var skip *SkipError
		switch {
		case err == nil:
			sr.Status = results.StatusPassed
		case ctx.Err() != nil:
			// Cut short: whatever it returned is not its verdict.
			sr.Status, sr.Error, sr.Message = results.StatusInterrupted, err.Error(), "interrupted: "+message(err)
		case errors.As(err, &skip):
			// A skip always says why: one without a reason is what a run
			// that died left of a stage it never reached.
			sr.Status, sr.Reason, sr.StartedAt, sr.DurationMS = results.StatusSkipped, cmp.Or(skip.Reason, "nothing to do"), nil, 0
		case errors.Is(err, results.ErrCheckFailed):
			sr.Status, sr.Error, sr.Message = results.StatusFailed, err.Error(), message(err)
		default:
			sr.Status, sr.Error, sr.Message = results.StatusError, err.Error(), message(err)
		}
		r.save()
		return err
	}
}

// message is what a stage's error says in one line: a failed check's own
// message, else the first line of the error.
func message(err error) string {
	var ce *results.CheckError
	text := err.Error()
	if errors.As(err, &ce) {
		text = ce.Message
	}
	line, _, _ := strings.Cut(text, "\n")
	return line
}

// selected skips stages that --stages did not name.
func selected(s Stage, next action) action {
	return func(ctx context.Context, r *Run) error {
		if !r.Config.wants(s) {
			return Skip("not selected (--stages)")
		}
		return next(ctx, r)
	}
}

// logged gives the stage its own log file under OUT/logs, and shows the
// stage on the progress display (a log group under GitHub Actions).
func logged(s Stage, next action) action {
	return func(ctx context.Context, r *Run) error {
		name := s.String()
		path := filepath.Join(r.Dir, "logs", name+".log")
		f, err := safefs.CreateIn(r.Dir, path, 0o644)
		if err != nil {
			return fmt.Errorf("stage log: %w", err)
		}
		defer f.Close()
		r.stageResult(name).Log = relPath(r.Dir, path)
		r.Log = f
		defer func() { r.Log = io.Discard }()
		r.Progress.StageStart(name)
		err = next(ctx, r)
		r.Progress.StageEnd(name, err)
		if err != nil {
			fmt.Fprintf(f, "stage %s: %v\n", name, err)
		}
		return err
	}
}

func relPath(base, p string) string {
	if rel, err := filepath.Rel(base, p); err == nil {
		return rel
	}
	return p
}
