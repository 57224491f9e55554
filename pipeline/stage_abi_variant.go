package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/confine"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/abi"
)

// Where a variant's layouts come from, as the ABI section says it.
const (
	layoutsTSan  = "the ThreadSanitizer builds' debug info"
	layoutsProbe = "header probes of the builds (gcc -g of every installed header)"
)

// abiVariant compares variant v of t's base and head: ZTS from the
// ThreadSanitizer builds' debug info where the run made them (the race
// stage asks for them), NTS, and ZTS without them, from header probes of
// the variant's builds (abi.ProbeHeaders): seconds of gcc, no build of its
// own. It is nil, with no error, where t has no successful base and head
// builds to compare. The DWARF and symbols are read in a child under
// limits (abi.CompareConfined): head's build made them, and an error
// wrapping abi.ErrHeadRejected is theirs.
func (r *Run) abiVariant(ctx context.Context, t *Target, v builders.Variant, c *probeCompiler) (*abi.Variant, error) {
	if v == builders.ZTS {
		if base, head := t.build(side.Base, builders.TSan), t.build(side.Head, builders.TSan); base != nil && head != nil {
			r.Progress.Step("%s: compare the ZTS ABI (%s)", t.Name, layoutsTSan)
			res, err := abi.CompareConfined(ctx, string(v), abiInput(t.BaseTree, base), abiInput(t.HeadTree, head), confine.Limits{})
			if err != nil {
				return nil, err
			}
			res.Layouts = layoutsTSan
			return res, nil
		}
	}
	base, head := t.build(side.Base, v), t.build(side.Head, v)
	if base == nil || head == nil {
		return nil, nil
	}
	var in [2]abi.Input
	var took time.Duration
	for i, b := range []*builders.Build{base, head} {
		tree, _ := t.tree(b.Side)
		r.Progress.Step("%s: probe the installed headers of %s (the %s ABI)", t.Name, b.Label, v)
		p, err := abi.ProbeHeaders(ctx, c, abi.ProbeOptions{
			Source: tree, Build: b.Dir, Log: r.Log,
			Dir: filepath.Join(r.Dir, abiStage{}.String(), safeName(t.Name), fmt.Sprintf("%s-%s", b.Side, v)),
		})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(r.Log, "%s: %d installed headers compiled, %d left out, %d compiles, %.1f s\n", b.Label, len(p.Headers), len(p.LeftOut), p.Compiles, p.Duration.Seconds())
		took += p.Duration
		in[i] = abiInput(tree, b)
		in[i].Debug, in[i].LeftOut = []string{p.Object}, p.LeftOut
	}
	res, err := abi.CompareConfined(ctx, string(v), in[0], in[1], confine.Limits{})
	if err != nil {
		return nil, err
	}
	res.Layouts, res.ProbeMS = layoutsProbe, took.Milliseconds()
	return res, nil
}

// probeCompiler runs the header probe's gcc through the run's build
// executor, made on first use: on this host, or in a build container that
// binds the probe's directory and, read-only, the build's, and nothing else
// of this host, as a build's own compiles do.
type probeCompiler struct {
	r    *Run
	exec builders.Executor
}

var _ abi.Compiler = (*probeCompiler)(nil)

func (p *probeCompiler) Compile(ctx context.Context, c abi.CompileCmd) (runErr, execErr error) {
	if p.exec == nil {
		b, err := newBuilder(ctx, p.r)
		if err != nil {
			return nil, err
		}
		p.exec = b.Exec
	}
	return p.exec.Exec(ctx, builders.Cmd{Dir: c.Dir, Args: c.Args, Env: c.Env, Output: c.Output, Mounts: []builders.Mount{{Path: c.Build, ReadOnly: true}}})
}
