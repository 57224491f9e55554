package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Without ThreadSanitizer builds of both sides there is no debug info to
// compare: the stage says so instead of passing.
func TestABIStageSkipsWithoutDebugInfo(t *testing.T) {
	r, _ := newTestRun(t, Config{})
	r.Targets = []*Target{{Name: "PHP-8.2", Builds: []*builders.Build{
		{Side: "base", Variant: builders.ZTS, OK: true}, {Side: "head", Variant: builders.ZTS, OK: true},
		{Side: "base", Variant: builders.TSan, OK: true}, {Side: "head", Variant: builders.TSan, OK: false},
	}}}
	err := abiStage{}.Run(context.Background(), r)
	var skip *SkipError
	if !errors.As(err, &skip) || !strings.Contains(skip.Reason, "no ThreadSanitizer builds") {
		t.Errorf("Run = %v, want a skip that says why", err)
	}
}

// TSan builds whose binaries cannot be read are an error of the stage
// (exit 2), never an "ABI unchanged", and the target's result says so.
func TestABIStageUnreadableBuilds(t *testing.T) {
	r, _ := newTestRun(t, Config{})
	dir := t.TempDir()
	r.Targets = []*Target{{Name: "PHP-8.4", BaseTree: dir, HeadTree: dir, Result: &results.TargetResult{Name: "PHP-8.4"}, Builds: []*builders.Build{
		{Side: "base", Variant: builders.TSan, OK: true, Dir: dir, PHP: dir + "/sapi/cli/php"},
		{Side: "head", Variant: builders.TSan, OK: true, Dir: dir, PHP: dir + "/sapi/cli/php"},
	}}}
	err := abiStage{}.Run(context.Background(), r)
	if err == nil || errors.Is(err, verdict.ErrCheckFailed) {
		t.Fatalf("Run = %v, want an error that is no check failure", err)
	}
	res := r.Targets[0].Result.ABI
	if res == nil || len(res.Errors) == 0 || len(res.Variants) != 0 {
		t.Errorf("ABI result %+v, want the error and no variant", res)
	}
	if !strings.Contains(res.Cell(), "not compared") {
		t.Errorf("cell %q does not say NTS was not compared", res.Cell())
	}
}
