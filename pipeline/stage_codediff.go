package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/codediff"
)

// codediffStage compares the base and head builds' object files function by
// function, relocation-aware.
type codediffStage struct{}

func (codediffStage) String() string { return "codediff" }

func (codediffStage) Run(ctx context.Context, r *Run) error {
	var failures []string
	compared := 0
	for _, t := range r.Targets {
		res := &results.CodeDiffResult{ExpectNTSNoop: r.Config.ExpectNTSNoop}
		for _, v := range []builders.Variant{builders.NTS, builders.ZTS} {
			base, head := t.build("base", v), t.build("head", v)
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
		tr := r.targetResult(t)
		r.mu.Lock()
		tr.CodeDiff = res
		r.mu.Unlock()
		r.save()
		for _, e := range res.Errors {
			return fmt.Errorf("%s: %s", t.Name, e)
		}
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

// build returns the target's successful build of a side and variant.
func (t *Target) build(side string, v builders.Variant) *builders.Build {
	for _, b := range t.Builds {
		if b.OK && b.Variant == v && b.Side == side {
			return b
		}
	}
	return nil
}
