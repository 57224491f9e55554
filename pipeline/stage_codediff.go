package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/codediff"
)

// codediffStage compares the base and head builds' object files function by
// function, relocation-aware.
type codediffStage struct{}

func (codediffStage) String() string { return results.StageCodeDiff }

// Needs nothing: the object files are read in Go (debug/elf), in a child
// of patchproof's own executable (codediff.CompareConfined).
func (codediffStage) Needs(*Config) []Need { return nil }

func (codediffStage) Run(ctx context.Context, r *Run) error {
	var judged []codediff.Target
	compared := 0
	for _, t := range r.Targets {
		res := &codediff.Result{ExpectNTSNoop: r.Config.ExpectNTSNoop}
		for _, v := range []builders.Variant{builders.NTS, builders.ZTS} {
			base, head := t.build(side.Base, v), t.build(side.Head, v)
			if base == nil || head == nil {
				continue
			}
			r.Progress.Step("%s: compare %s machine code (%s)", t.Name, v, r.Config.Objects)
			// In a child under limits: head's build made the objects.
			// What of them keeps the comparison from being made fails
			// the target (Rejected); anything else, a crash on base's
			// objects included, is a comparison that could not run.
			rep, err := codediff.CompareConfined(ctx, base.Dir, head.Dir, codediff.Options{Objects: r.Config.Objects})
			switch {
			case errors.Is(err, codediff.ErrHeadRejected):
				res.Rejected = append(res.Rejected, fmt.Sprintf("%s: %v", v, err))
				continue
			case err != nil:
				res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", v, err))
				continue
			}
			compared++
			fmt.Fprintf(r.Log, "%s %s: %s\n", t.Name, v, rep.Summary())
			if v == builders.NTS {
				res.NTS = rep
			} else {
				res.ZTS = rep
			}
		}
		r.setTarget(t, func(tr *results.TargetResult) { tr.CodeDiff = res })
		judged = append(judged, codediff.Target{Name: t.Name, Result: res})
	}
	// A target that could not be compared does not keep the others from
	// being compared; it makes the stage an error once they all were.
	if err := codediff.Judge(judged); err != nil {
		return err
	}
	if compared == 0 {
		return Skip("no base and head builds of the same variant")
	}
	return nil
}
