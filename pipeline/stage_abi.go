package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/abi"
)

// abiStage compares the binary interface extensions are compiled against,
// base against head: the layouts of the installed headers' types, the
// exported symbols, the API numbers (verify/abi).
//
// Layouts come from DWARF, which the official flags do not make. The
// ThreadSanitizer builds have it (-g) for what they compile again: mysqlnd,
// the extensions using it, TSRM and the files the change touches, which
// is where a change to mysqlnd's headers shows, and they lay types out as
// the ZTS build does (the sanitizer adds no member). So the check reads
// ZTS from them where the run made them. NTS, and ZTS without them, come
// from a header probe of each build (abi.ProbeHeaders): one file that
// includes every installed header, compiled with -g against the build's
// configured headers, in seconds (abiVariant).
type abiStage struct{}

func (abiStage) String() string { return results.StageABI }

// Needs the compiler of the header probe where builds run; DWARF and
// symbols are read in Go (debug/dwarf), in a child of patchproof's own
// executable (abi.CompareConfined).
func (abiStage) Needs(cfg *Config) []Need {
	return cfg.placed(only(builders.KindHost, Need{Tool: "gcc", Package: "gcc", Why: "compiles the ABI check's header probe"})...)
}

func (abiStage) Run(ctx context.Context, r *Run) error {
	var judged []abi.Target
	compared := 0
	probe := &probeCompiler{r: r}
	for _, t := range r.Targets {
		res := &abi.Result{Branch: t.Name}
		for _, variant := range []builders.Variant{builders.NTS, builders.ZTS} {
			v, err := r.abiVariant(ctx, t, variant, probe)
			switch {
			case errors.Is(err, abi.ErrHeadRejected):
				// A failure of the target's, not a check that could
				// not run (abi.Judge).
				res.Rejected = append(res.Rejected, err.Error())
			case err != nil:
				res.Errors = append(res.Errors, err.Error())
			case v != nil:
				res.Variants = append(res.Variants, v)
				compared++
				fmt.Fprintf(r.Log, "%s %s: %d types, %d symbols, %d changes\n", t.Name, v.Name, v.Types, v.Symbols, len(v.Changes))
			case slices.Contains(r.Config.Variants, variant):
				res.NotCompared = append(res.NotCompared, abi.NotCompared{Variant: string(variant), Why: "no successful builds of base and head"})
			}
		}
		if len(res.Variants) == 0 && len(res.Errors) == 0 && len(res.Rejected) == 0 {
			continue
		}
		r.setTarget(t, func(tr *results.TargetResult) { tr.ABI = res })
		judged = append(judged, abi.Target{Name: t.Name, Result: res})
	}
	if err := abi.Judge(judged, r.Config.ABI); err != nil {
		return err
	}
	if compared == 0 {
		return Skip("no successful NTS or ZTS builds of base and head")
	}
	return nil
}

// abiInput is what the ABI check reads of a side's build: the tree it was
// exported as (installed headers, API numbers) and its php and Apache
// module, whose debug info a TSan build has. The build compiled in its own
// directory: a header's path in DWARF lies there.
func abiInput(tree string, b *builders.Build) abi.Input {
	in := abi.Input{Source: tree, Roots: []string{b.Dir}}
	if b.PHP != "" {
		in.Binaries = append(in.Binaries, b.PHP)
	}
	if b.Module != "" {
		in.Binaries = append(in.Binaries, b.Module)
	}
	in.Debug = in.Binaries
	return in
}
