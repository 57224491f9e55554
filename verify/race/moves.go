package race

import (
	"fmt"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Moves are what the concurrency check found different in head: its
// counters off where they should be exact, and the ThreadSanitizer
// reports head has and base has not (those in the change's code or
// ext/mysqlnd fail the run) or base had and head has not.
func (r *Result) Moves() []verdict.Move {
	if r == nil {
		return nil
	}
	var ms []verdict.Move
	for _, c := range r.Counters {
		if c.Side != side.Head || c.Check.Exact() {
			continue
		}
		how := fmt.Sprintf("%s %d of %d off in %d concurrent requests, %d updates lost", verdict.Failed.Icon(), len(c.Check.Off), c.Check.Counters, c.Check.Requests, c.Check.Lost)
		if c.Check.WorkError != "" {
			how = verdict.Failed.Icon() + " " + markdown.Text(c.Check.WorkError)
		}
		what := "head's counters"
		if c.Memory {
			what += ", memory statistics on"
		}
		ms = append(ms, verdict.Move{What: what, How: how})
	}
	if t := r.TSan; t != nil {
		for _, rep := range t.Diff.New {
			ms = append(ms, verdict.Move{What: "ThreadSanitizer: " + markdown.Text(rep.Summary), How: verdict.Failed.Icon() + " new in head"})
		}
		if n := len(t.Diff.NewElsewhere); n > 0 {
			ms = append(ms, verdict.Move{What: "ThreadSanitizer, outside the change's code", How: fmt.Sprintf("%d new in head, not gated", n)})
		}
		if n := len(t.Diff.Gone); n > 0 {
			ms = append(ms, verdict.Move{What: "ThreadSanitizer", How: fmt.Sprintf("%d of base's reports gone in head", n)})
		}
	}
	return verdict.Capped(ms)
}
