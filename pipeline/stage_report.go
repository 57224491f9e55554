package pipeline

import (
	"context"
	"time"

	"github.com/patchproof/patchproof/pipeline/report"
	"github.com/patchproof/patchproof/pipeline/results"
)

// reportStage renders the run's summary and delivers it: OUT/summary.md,
// $GITHUB_STEP_SUMMARY, and with --post the PR comment and commit status.
// It runs whatever the earlier stages did: a failed run needs its report
// most.
type reportStage struct{}

func (reportStage) String() string { return results.ReportStage }

func (reportStage) Run(ctx context.Context, r *Run) error {
	opt := r.Config.ReportOptions()
	opt.Out = r.Dir
	// The run ends as this stage does: say how long it took, and render
	// the verdict finish will record. A results.json still running is a
	// run that did not finish; this copy is one that is finishing.
	res := *r.Result
	now := time.Now().UTC().Truncate(time.Second)
	v := results.StageVerdict(res.Stages)
	res.FinishedAt, res.Status, res.ExitCode, res.Error = &now, v.Status, v.ExitCode(), v.Reason
	pub, err := report.Publish(ctx, opt, []*results.Result{&res})
	if pub != nil {
		pub.WriteLog(r.Log)
		if pub.Summary != "" {
			r.Progress.Step("summary: %s", relPath(r.Dir, pub.Summary))
		}
		if pub.Comment != nil {
			r.Progress.Step("comment %s %s", pub.Comment.Action, pub.Comment.URL)
		}
		for _, n := range pub.Notes {
			r.Warn(results.ReportStage, "%s", n)
		}
	}
	return err
}
