package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
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
// ZTS from them, at no build of its own. NTS has no such build: it is not
// compared, and the report says so (its machine code is codediff's).
type abiStage struct{}

func (abiStage) String() string { return results.StageABI }

// Needs nothing: DWARF and symbols are read in Go (debug/dwarf).
func (abiStage) Needs(*Config) []Need { return nil }

func (abiStage) Run(ctx context.Context, r *Run) error {
	var judged []abi.Target
	compared := 0
	for _, t := range r.Targets {
		base, head := t.build(side.Base, builders.TSan), t.build(side.Head, builders.TSan)
		if base == nil || head == nil {
			continue
		}
		res := &abi.Result{Branch: t.Name}
		r.Progress.Step("%s: compare the ZTS ABI (the ThreadSanitizer builds' debug info)", t.Name)
		v, err := abi.Compare(string(builders.ZTS), abiInput(t.BaseTree, base), abiInput(t.HeadTree, head))
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
		} else {
			res.Variants = append(res.Variants, v)
			compared++
			fmt.Fprintf(r.Log, "%s zts: %d types, %d symbols, %d changes\n", t.Name, v.Types, v.Symbols, len(v.Changes))
		}
		res.NotCompared = append(res.NotCompared, abi.NotCompared{Variant: string(builders.NTS), Why: "no NTS build has debug info; its machine code is the codediff check's"})
		r.setTarget(t, func(tr *results.TargetResult) { tr.ABI = res })
		judged = append(judged, abi.Target{Name: t.Name, Result: res})
	}
	if err := abi.Judge(judged, r.Config.ABI); err != nil {
		return err
	}
	if compared == 0 {
		return Skip("no ThreadSanitizer builds of base and head: they carry the debug info (the race stage asks for them)")
	}
	return nil
}

// abiInput is what the ABI check reads of a side's TSan build: the tree
// it was exported as (installed headers, API numbers) and its php and
// Apache module. The build compiled in its own directory: a header's
// path in DWARF lies there.
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

// extraVariants are the ThreadSanitizer builds, whose debug info the check
// reads (see abiStage), made from the ZTS builds: none without them.
func (abiStage) extraVariants(cfg *Config) []builders.Variant {
	if slices.Contains(cfg.Variants, builders.ZTS) {
		return []builders.Variant{builders.TSan}
	}
	return nil
}
