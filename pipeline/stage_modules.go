package pipeline

import (
	"context"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/modules"
)

// modulesStage compares the modules base's and head's php lists, variant
// by variant, from what each build recorded of php -m.
type modulesStage struct{}

func (modulesStage) String() string { return results.StageModules }

// Needs nothing: the builds recorded their php -m.
func (modulesStage) Needs(*Config) []Need { return nil }

func (modulesStage) Run(ctx context.Context, r *Run) error {
	var judged []modules.Target
	for _, t := range r.Targets {
		res := &modules.Result{}
		for _, v := range r.Config.Variants {
			base, head := t.build(side.Base, v), t.build(side.Head, v)
			if base == nil || head == nil || !base.OK || !head.OK {
				continue
			}
			res.Variants = append(res.Variants, modules.Compare(string(v), base.PHPModules, head.PHPModules))
		}
		if len(res.Variants) == 0 {
			continue
		}
		r.setTarget(t, func(tr *results.TargetResult) { tr.Modules = res })
		judged = append(judged, modules.Target{Name: t.Name, Result: res})
	}
	if len(judged) == 0 {
		return Skip("no base and head builds of the same variant")
	}
	return modules.Judge(judged)
}
