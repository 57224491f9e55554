package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/codediff"
)

// codediffStage compares the base and head builds' object files function by
// function, relocation-aware.
type codediffStage struct{}

func (codediffStage) String() string { return "codediff" }

// Needs nothing: the object files are read in Go (debug/elf).
func (codediffStage) Needs(*Config) []Need { return nil }

func (codediffStage) Run(ctx context.Context, r *Run) error {
	var failures, errs []string
	compared := 0
	for _, t := range r.Targets {
		res := &results.CodeDiffResult{ExpectNTSNoop: r.Config.ExpectNTSNoop}
		for _, v := range []builders.Variant{builders.NTS, builders.ZTS} {
			base, head := t.build(side.Base, v), t.build(side.Head, v)
			if base == nil || head == nil {
				continue
			}
			r.Progress.Step("%s: compare %s machine code (%s)", t.Name, v, r.Config.Objects)
			rep, err := codediff.CompareDirs(base.Dir, head.Dir, codediff.Options{Objects: r.Config.Objects})
			if err != nil {
				res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", v, err))
				continue
			}
			compared++
			fmt.Fprintf(r.Log, "%s %s: %s\n", t.Name, v, rep.Summary())
			if v == builders.NTS {
				res.NTS = rep
				if r.Config.ExpectNTSNoop && !rep.AllIdentical() {
					failures = append(failures, fmt.Sprintf("%s: NTS machine code changed: %s", t.Name, changedNames(rep)))
				}
			} else {
				res.ZTS = rep
			}
		}
		r.setTarget(t, func(tr *results.TargetResult) { tr.CodeDiff = res })
		for _, e := range res.Errors {
			errs = append(errs, t.Name+": "+e)
		}
	}
	// A target that could not be compared does not keep the others from
	// being compared; it makes the stage an error once they all were.
	if err := partsFailed(errs); err != nil {
		return err
	}
	if compared == 0 {
		return Skip("no base and head builds of the same variant")
	}
	if len(failures) > 0 {
		return results.CheckFailed("%s", strings.Join(failures, "; "))
	}
	return nil
}

// changedNames lists what differs, as object:function.
func changedNames(rep *codediff.Report) string {
	var names []string
	for _, c := range rep.Changed {
		names = append(names, c.Object+":"+c.Name)
	}
	for _, a := range rep.Added {
		names = append(names, "+"+a.Object+":"+a.Name)
	}
	for _, d := range rep.Removed {
		names = append(names, "-"+d.Object+":"+d.Name)
	}
	if len(names) > 10 {
		names = append(names[:10], fmt.Sprintf("and %d more", len(names)-10))
	}
	return strings.Join(names, ", ")
}
