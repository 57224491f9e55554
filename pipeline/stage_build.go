package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"

	"golang.org/x/sync/errgroup"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
)

// buildStage builds every target's base and head in every variant, under
// --jobs, with make's -j shared between the builds that run at once.
type buildStage struct{}

func (buildStage) String() string { return results.StageBuild }

func (buildStage) Needs(cfg *Config) []Need {
	// In containers the build image has the compilers; this host runs
	// the engine and makes the image's base.
	needs := only(builders.KindDocker,
		Need{Tool: "dockerd", Package: "docker.io", Why: "the Docker engine the builds run in"},
		Need{Tool: "debootstrap", Package: "debootstrap", Why: "makes the Debian base image where no registry is reachable"},
	)
	host := []Need{
		{Tool: "gcc", Package: "gcc", Why: "compiles PHP"},
		{Tool: "make", Package: "make", Why: "runs PHP's build"},
		{Tool: "pkg-config", Package: "pkg-config", Why: "configure finds libraries with it"},
	}
	if slices.Contains(cfg.Variants, builders.ZTS) {
		host = append(host, Need{Tool: "apxs2", Package: "apache2-dev", Why: "ZTS builds the Apache module the benchmark loads"})
	}
	host = append(host,
		Need{Tool: "autoconf", Package: "autoconf", Why: "git checkouts have no configure: ./buildconf"},
		Need{Tool: "bison", Package: "bison", Why: "git checkouts generate their parsers"},
		Need{Tool: "re2c", Package: "re2c", Why: "git checkouts generate their scanners"},
		Need{Tool: "ccache", Package: "ccache", Why: "a head build after its base recompiles only what changed", Optional: true},
	)
	return cfg.placed(append(needs, only(builders.KindHost, host...)...)...)
}

type buildJob struct {
	t    *Target
	side side.Side
	spec builders.Spec
	// from is the index of the job whose build this one is derived from
	// (builders.Spec.From), -1 for none: a head's base, a TSan build's
	// ZTS. It is always an earlier job, so that waiting for it cannot
	// hold up the job it waits for.
	from int
}

func (st buildStage) Run(ctx context.Context, r *Run) error {
	jobs, err := st.jobs(r)
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		return Skip("no source trees: checkout did not finish")
	}
	b, err := newBuilder(ctx, r)
	if err != nil {
		return err
	}
	// The builds it makes or reuses stay held until the run ends: the
	// later stages read them, and no prune may take them away before.
	r.holdBuilds(b)
	parallel := min(r.Config.Jobs, len(jobs))
	makeJobs := max(1, runtime.NumCPU()/max(1, parallel))

	built := make([]*builders.Build, len(jobs))
	errs := make([]error, len(jobs))
	done := make([]chan struct{}, len(jobs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var logMu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i, j := range jobs {
		g.Go(func() error {
			defer close(done[i])
			if j.from >= 0 {
				select {
				case <-done[j.from]:
				case <-gctx.Done():
					return gctx.Err()
				}
				// A failed base (or ZTS build) is built again in full by
				// this job: its failure is its own to report.
				if f := built[j.from]; f != nil && f.OK && errs[j.from] == nil {
					j.spec.From = f
				}
			}
			name := fmt.Sprintf("build-%s-%s-%s.log", safeName(j.t.Name), j.side, j.spec.Variant)
			f, err := safefs.CreateIn(r.Dir, filepath.Join(r.Dir, "logs", name), 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			counter := &compileCounter{w: f}
			j.spec.Log, j.spec.Jobs, j.spec.Objects = counter, makeJobs, counter.setTotal
			if !b.Cached(gctx, j.spec) {
				r.Progress.Step("%s: building (make -j%d, log logs/%s)", j.spec.Label, makeJobs, name)
			}
			stop := heartbeat(r.Progress, 30*time.Second, func() string {
				return j.spec.Label + ": " + counter.status()
			})
			res, err := b.Build(gctx, j.spec)
			stop()
			built[i], errs[i] = res, err
			logMu.Lock()
			defer logMu.Unlock()
			switch {
			case err == nil && res.Cached:
				r.Progress.Step("%s: cached (%s)", j.spec.Label, res.PHPVersion)
			case err == nil:
				r.Progress.Step("%s: built in %s (%s)", j.spec.Label, elapsed(msDuration(res.DurationMS)), res.PHPVersion)
			case errors.Is(err, builders.ErrBuildFailed):
				r.Progress.Step("%s: FAILED: %s", j.spec.Label, res.Failure)
				for _, ce := range res.Errors {
					r.Progress.Annotate(ce.File, ce.Line, ce.Message)
				}
			default:
				// Could not build at all: stop the others, it is infrastructure.
				return err
			}
			if res != nil {
				res.BuildLog = filepath.Join("logs", name)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var failed []string
	for i, j := range jobs {
		if built[i] == nil {
			continue
		}
		j.t.Builds = append(j.t.Builds, built[i])
		tr := r.targetResult(j.t)
		tr.Builds = append(tr.Builds, built[i])
		if errs[i] != nil {
			failed = append(failed, j.spec.Label)
		}
	}
	r.save()
	if len(failed) > 0 {
		return results.CheckFailed("%d of %d builds failed (%s)", len(failed), len(jobs), strings.Join(failed, ", "))
	}
	return nil
}

// jobs are the builds the run asks for, in order: every variant of each
// side of each target, then the ThreadSanitizer builds, each derived from
// an earlier job where it can be.
func (buildStage) jobs(r *Run) ([]buildJob, error) {
	// A change to the build system is configured by its own configure,
	// and so, to compare like with like, is its base.
	buildconf := map[*Target]bool{}
	changes := map[*Target][]string{}
	for _, t := range r.Targets {
		if t.BaseTree == "" || t.HeadTree == "" {
			continue
		}
		changed, err := t.Repo.ChangedFiles(t.Base, t.Head)
		if err != nil {
			return nil, err
		}
		changes[t] = changed
		if p := buildSystemChange(changed); p != "" {
			buildconf[t] = true
			r.Progress.Step("%s: the change touches the build system (%s): ./buildconf --force on base and head", t.Name, p)
		}
	}
	var jobs []buildJob
	// index finds the job of t, s and v added so far.
	index := func(t *Target, s side.Side, v builders.Variant) int {
		return slices.IndexFunc(jobs, func(j buildJob) bool { return j.t == t && j.side == s && j.spec.Variant == v })
	}
	add := func(variants []builders.Variant) error {
		for _, t := range r.Targets {
			if t.BaseTree == "" || t.HeadTree == "" {
				continue // a backport that did not apply, or checkout failed
			}
			for _, s := range side.Sides {
				src, commit := t.tree(s)
				c, err := t.Repo.Commit(commit)
				if err != nil {
					return err
				}
				for _, v := range variants {
					// Derived builds (see builders.Spec.From): a head from
					// its base unless the change touches the build system;
					// a TSan build from its side's ZTS build.
					from := -1
					var instrument []string
					switch {
					case r.Config.FreshBuilds:
					case v == builders.TSan:
						from, instrument = index(t, s, builders.ZTS), builders.TSanInstrument(changes[t])
					case s == side.Head && !buildconf[t]:
						from = index(t, side.Base, v)
					}
					jobs = append(jobs, buildJob{t: t, side: s, from: from, spec: builders.Spec{
						Label:    fmt.Sprintf("%s %s/%s", t.Name, s, v),
						Side:     s,
						Source:   src,
						TreeHash: c.TreeHash.String(),
						Variant:  v,
						Profile:  r.Config.Profile,
						// A head is the PR's code, on a backport target too.
						Trusted:    s == side.Base,
						Buildconf:  buildconf[t],
						Changed:    changes[t],
						Instrument: instrument,
					}})
				}
			}
		}
		return nil
	}
	if err := add(r.Config.Variants); err != nil {
		return nil, err
	}
	// What the selected stages need beyond --variants (the ThreadSanitizer
	// builds) comes last: every other check waits on the builds before
	// them.
	if extra := extraVariants(r.Config); len(extra) > 0 {
		if err := add(extra); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// A variantNeeder is a stage that needs builds of variants beyond
// --variants (the ThreadSanitizer builds, made from the ZTS ones): the
// build stage makes them when the stage is selected.
type variantNeeder interface {
	extraVariants(cfg *Config) []builders.Variant
}

// extraVariants are the variants the stages cfg selects need beyond
// cfg.Variants, each once, in the stages' order.
func extraVariants(cfg *Config) []builders.Variant {
	var extra []builders.Variant
	for _, s := range stages {
		vn, ok := s.(variantNeeder)
		if !ok || !cfg.wants(s) {
			continue
		}
		for _, v := range vn.extraVariants(cfg) {
			if !slices.Contains(cfg.Variants, v) && !slices.Contains(extra, v) {
				extra = append(extra, v)
			}
		}
	}
	return extra
}

// holdBuilds keeps b, whose builds the run's stages read, until
// releaseBuilds.
func (r *Run) holdBuilds(b *builders.Builder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buildHolders = append(r.buildHolders, b)
}

// releaseBuilds lets go of the builds the run made or reused, at its end:
// from then on a prune may remove them. A second call does nothing.
func (r *Run) releaseBuilds() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.buildHolders {
		b.Release()
	}
	r.buildHolders = nil
}

// newBuilder makes the builder of the run's placement.
func newBuilder(ctx context.Context, r *Run) (*builders.Builder, error) {
	b := &builders.Builder{CacheDir: r.Cache, CacheMax: r.Config.CacheMax}
	if err := r.place.builder(ctx, r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// compileCounter passes a build log through and counts compiler
// invocations against the objects the Makefile compiles, for the progress
// display.
type compileCounter struct {
	w       io.Writer
	mu      sync.Mutex
	n       int
	total   int // 0 until configure has finished
	partial []byte
}

func (c *compileCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		if bytes.Contains(c.partial[:i], []byte(" -c ")) {
			c.n++
		}
		c.partial = c.partial[i+1:]
	}
	c.mu.Unlock()
	return c.w.Write(p)
}

// setTotal is the build's Spec.Objects. Configure has finished, so the
// lines counted so far were its own checks ("checking if gcc supports -c
// -o file.o"), not compiles.
func (c *compileCounter) setTotal(objects int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n, c.total = 0, objects
}

// status is the heartbeat's line. A ccache-warm or partial build, or one
// that leaves some of configure's objects alone, ends below the total.
func (c *compileCounter) status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total == 0 {
		return fmt.Sprintf("%d files compiled", c.n)
	}
	return fmt.Sprintf("%d of %d files compiled (%d%%)", c.n, c.total, 100*c.n/c.total)
}

// heartbeat shows status() every interval until stop is called, so a long
// step is never silent.
func heartbeat(p *Progress, every time.Duration, status func() string) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.Step("%s", status())
			}
		}
	}()
	return func() { close(done) }
}

// HostChecks are what the builds need of this machine beyond their
// tools: free disk in the cache.
func (buildStage) HostChecks(o HostOptions) []HostCheck { return []HostCheck{diskCheck(o)} }

// prerequisite marks the builds as what every check needs.
func (buildStage) prerequisite() {}
