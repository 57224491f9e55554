package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/pipeline"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/workloads/bench"
)

func runCmd(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("run", stdout)
	var cfg pipeline.Config
	var variants, stages, backportTo, mergeUp, builder, profile, benchMode string
	backports := backportFlag{}
	fs.IntVar(&cfg.PR, "pr", 0, "validate pull request `N` of --repo (default "+pipeline.DefaultRepo+")")
	fs.StringVar(&cfg.Repo, "repo", "", "repository `URL|PATH` (default: the bundled demo)")
	fs.StringVar(&cfg.Base, "base", "", "base branch or `REF`")
	fs.StringVar(&cfg.Head, "head", "", "head `REF` (with --pr: refs/pull/N/head)")
	fs.StringVar(&cfg.ExpectHead, "expect-head", "", "the `COMMIT` the head must be once fetched, as planned: a head that moved since is refused (exit 2)")
	fs.StringVar(&backportTo, "backport-to", "", "apply the change to these `BRANCHES` too (comma-separated)")
	fs.StringVar(&mergeUp, "merge-up", "", "merge the change up into these higher `BRANCHES`, in order, as php-src's merge-up does (for a PR on the lowest branch: PHP-8.5,master)")
	fs.StringVar(&cfg.Target, "target", "", "run only the target `NAME` of the plan (a base branch), as one CI job of several")
	fs.Var(backports, "backport", "an explicit backport `BRANCH=REF` (repeatable)")
	fs.StringVar(&variants, "variants", "nts,zts", "`VARIANTS` to build: nts, zts, and for the suites debug-zts (--enable-debug, as php-src CI's debug ZTS job) and debug-zts-asan (with AddressSanitizer: run-tests --asan)")
	fs.StringVar(&builder, "builder", string(builders.KindHost), "where to build: host or docker")
	fs.StringVar(&profile, "profile", string(builders.ProfileMySQL), "configure profile: mysql or official")
	fs.StringVar(&stages, "stages", "", "run only these `STAGES` ("+strings.Join(pipeline.StageNames(), ",")+")")
	fs.IntVar(&cfg.Jobs, "jobs", 0, fmt.Sprintf("concurrent builds and test runs, at most %d (default: CPUs/2)", pipeline.MaxJobs))
	fs.StringVar(&cfg.Out, "out", "patchproof-out", "run `DIR`: results.json, summary.md, logs, trees; apart from a local --repo and from --cache (neither it, inside it, nor holding it)")
	fs.StringVar(&cfg.Cache, "cache", "", "cache `DIR`: mirrors, demo, builds (default ~/.cache/patchproof)")
	fs.DurationVar(&cfg.Limits.FetchIdle, "fetch-idle-timeout", checkout.DefaultFetchIdle, "fail a fetch that receives nothing from the remote for `DURATION`")
	fs.DurationVar(&cfg.Limits.FetchTotal, "fetch-timeout", checkout.DefaultFetchTotal, "fail fetching the run's refs from the remote when it takes longer than `DURATION`")
	var treeBytes, cacheMax string
	fs.StringVar(&cacheMax, "cache-max", "", "prune the cache's builds to `SIZE` after each build (bytes, or with KiB, MiB, GiB; default a quarter of its file system, at most 50GiB)")
	fs.BoolVar(&cfg.FreshBuilds, "fresh-builds", false, "build every head and ThreadSanitizer build from its source (by default a head is made from its base's build tree, and TSan instruments mysqlnd, its extensions, TSRM and the changed C files in a copy of the ZTS build)")
	fs.StringVar(&treeBytes, "max-tree-bytes", fmt.Sprintf("%dGiB", checkout.DefaultTreeBytes>>30), "fail exporting a commit whose files hold more than `SIZE` (bytes, or with KiB, MiB, GiB)")
	fs.IntVar(&cfg.Limits.TreeFiles, "max-tree-files", checkout.DefaultTreeFiles, "fail exporting a commit of more than `N` files and directories")
	fs.StringVar(&benchMode, "bench", string(pipeline.BenchQuick), "benchmark settings: quick (40 CPU windows of 1 s) or report (30 of 2 s, longer counted windows)")
	var threads string
	fs.StringVar(&threads, "threads", "", fmt.Sprintf("PHP threads of the benchmark's and the concurrency check's server, 1 to %d (default 16); a `LIST` such as 1,2,4,8,16,32 (each count once) also measures the CPU cost of statistics at each count (the scaling chart), the full benchmark at 16 or the largest", pipeline.MaxThreads))
	var measures string
	fs.StringVar(&measures, "bench-measures", "", "the benchmark's `MEASURES` (cpu,locks,instructions,profile; default all)")
	fs.BoolVar(&cfg.AA, "aa", false, "benchmark base against itself as if it were head (A/A: every verdict is a false one)")
	fs.BoolVar(&cfg.NoPin, "no-pin", false, "leave the benchmark unpinned on a small machine (by default, with 4 CPUs or fewer and no --*-cpus, the server gets half of them)")
	pipeline.StageFlags(fs.FlagSet, &cfg)
	fs.IntVar(&cfg.Passes, "passes", 0, fmt.Sprintf("benchmark CPU passes, at most %d (default 40 of 1 s quick, 30 of 2 s report)", pipeline.MaxPasses))
	fs.StringVar(&cfg.ServerCPUs, "server-cpus", "", "pin the benchmark's server to `CPUS` (taskset list)")
	fs.StringVar(&cfg.LoadCPUs, "load-cpus", "", "pin wrk to `CPUS`")
	fs.StringVar(&cfg.DBCPUs, "db-cpus", "", "pin MariaDB to `CPUS`")
	fs.BoolVar(&cfg.ExpectNTSNoop, "expect-nts-noop", true, "fail when any NTS machine code changes")
	fs.Var(&cfg.ABI, "abi", "what an ABI break does to a stable branch's target (PHP-x.y): fail, warn or off (default fail; on master it is information)")
	fs.StringVar(&cfg.Objects, "objects", "ext/mysqlnd/*.o", "object files to compare, a `GLOB` relative to a build")
	fs.StringVar(&cfg.PostTo, "post-to", "", "with --post (refused without it): the PR to post on when it is not the one validated (`OWNER/REPO#N` or its URL), e.g. for the demo")
	fs.BoolVar(&cfg.Post, "post", false, "post the summary comment and commit status on the PR")
	fs.BoolVar(&cfg.DryRun, "dry-run", false, "with --post (refused without it): print what would be posted, and post nothing")
	fs.StringVar(&cfg.GitHubAPI, "github-api", "", "GitHub REST API `URL` to post to (default $PATCHPROOF_GITHUB_API, else https://api.github.com/)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	// An empty --repo is the demo's spelling in Config: given on the
	// command line it is a mistake (an unset variable), not a request to
	// validate the bundled demo.
	if given["repo"] && strings.TrimSpace(cfg.Repo) == "" {
		return &results.InputError{Input: fmt.Sprintf("--repo %q", cfg.Repo), Err: errors.New("names no repository (leave --repo out to validate the bundled demo)")}
	}
	var err error
	if cfg.Variants, err = parseList("--variants", variants, builders.ParseVariant); err != nil {
		return err
	}
	if cfg.Builder, err = parseValue("--builder", builder, builders.ParseExecutorKind); err != nil {
		return err
	}
	if cfg.Profile, err = parseValue("--profile", profile, builders.ParseProfile); err != nil {
		return err
	}
	if cfg.Bench, err = parseValue("--bench", benchMode, pipeline.ParseBenchMode); err != nil {
		return err
	}
	if given["stages"] {
		items, err := splitList("--stages", stages, false)
		if err != nil {
			return err
		}
		if cfg.Stages, err = pipeline.ParseStageSet(items); err != nil {
			return &results.InputError{Input: "--stages " + stages, Err: err}
		}
	}
	if given["bench-measures"] {
		if cfg.BenchMeasures, err = parseList("--bench-measures", measures, bench.ParseMeasure); err != nil {
			return err
		}
	}
	if given["threads"] {
		if cfg.Threads, cfg.Sweep, err = threadCounts(threads); err != nil {
			return err
		}
	}
	if cfg.Limits.TreeBytes, err = parseSize("--max-tree-bytes", treeBytes); err != nil {
		return err
	}
	if given["cache-max"] {
		if cfg.CacheMax, err = parseSize("--cache-max", cacheMax); err != nil {
			return err
		}
	}
	if cfg.MergeUp, err = splitList("--merge-up", mergeUp, true); err != nil {
		return err
	}
	if cfg.BackportTo, err = splitList("--backport-to", backportTo, true); err != nil {
		return err
	}
	cfg.Backports = backports
	cfg.RerunFlags = rerunFlags(fs.FlagSet)
	cfg.Stdout, cfg.Stderr = stdout, stderr
	res, err := pipeline.Execute(ctx, cfg)
	if res != nil {
		fmt.Fprintf(stdout, "results: %s/results.json\n", cfg.Out)
	}
	return err
}

// notRerun are run's flags that a rerun does not repeat as given: they name
// the source and the target (the rerun command names them itself, pinned
// to the run's commits), or where the run's output goes and whom it
// posts to. Every other flag given, a check's own included, is repeated:
// a new setting is kept by a rerun without a line here.
var notRerun = map[string]bool{
	"pr": true, "repo": true, "base": true, "head": true, "expect-head": true,
	"backport-to": true, "merge-up": true, "target": true, "backport": true,
	"out": true, "cache": true, "cache-max": true, "jobs": true,
	"fetch-idle-timeout": true, "fetch-timeout": true,
	"post": true, "post-to": true, "dry-run": true, "github-api": true,
}

// rerunFlags are the flags given to fs that a rerun repeats, as
// --name=value in the order given.
func rerunFlags(fs *flag.FlagSet) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if !notRerun[f.Name] {
			out = append(out, "--"+f.Name+"="+f.Value.String())
		}
	})
	return out
}

// threadCounts reads --threads: one count, or a list of them for the
// scaling sweep, whose main count is the report's 16 when listed, else the
// largest.
func threadCounts(s string) (main int, sweep []int, err error) {
	items, err := splitList("--threads", s, false)
	if err != nil {
		return 0, nil, err
	}
	for _, it := range items {
		n, err := strconv.Atoi(it)
		if err != nil || n < 1 || n > pipeline.MaxThreads {
			return 0, nil, &results.InputError{Input: "--threads " + s, Err: fmt.Errorf("%q is not a thread count (1 to %d)", it, pipeline.MaxThreads)}
		}
		if slices.Contains(sweep, n) {
			return 0, nil, &results.InputError{Input: "--threads " + s, Err: fmt.Errorf("%d is listed twice", n)}
		}
		sweep = append(sweep, n)
	}
	if len(sweep) == 1 {
		return sweep[0], nil, nil
	}
	main = slices.Max(sweep)
	if slices.Contains(sweep, 16) {
		main = 16
	}
	return main, sweep, nil
}

// parseValue reads flag's value s with its type's parser; what the parser
// rejects is bad input naming the flag and the value.
func parseValue[T any](flag, s string, parse func(string) (T, error)) (T, error) {
	v, err := parse(s)
	if err != nil {
		return v, &results.InputError{Input: flag + " " + s, Err: err}
	}
	return v, nil
}

// parseList reads flag's comma-separated value s, each item with its
// type's parser.
func parseList[T any](flag, s string, parse func(string) (T, error)) ([]T, error) {
	items, err := splitList(flag, s, false)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(items))
	for i, it := range items {
		if out[i], err = parse(it); err != nil {
			return nil, &results.InputError{Input: flag + " " + s, Err: err}
		}
	}
	return out, nil
}

// splitList splits the comma-separated value of flag. An empty item
// ("a,,b", ",") is bad input, and so is an item listed twice (a typo: the
// run would build or check it twice), and an empty value unless none
// means something for the flag (noneOK: --backport-to "" backports
// nowhere).
func splitList(flag, s string, noneOK bool) ([]string, error) {
	bad := func(why string) error {
		return &results.InputError{Input: strings.TrimSpace(flag + " " + s), Err: errors.New(why)}
	}
	if strings.TrimSpace(s) == "" {
		if noneOK {
			return nil, nil
		}
		return nil, bad("names nothing")
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			return nil, bad("an empty item in the list")
		}
		if slices.Contains(out, f) {
			return nil, bad(fmt.Sprintf("%q is listed twice", f))
		}
		out = append(out, f)
	}
	return out, nil
}

// backportFlag collects --backport BRANCH=REF.
type backportFlag map[string]string

var _ flag.Value = backportFlag{}

func (b backportFlag) String() string { return "" }

func (b backportFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" || v == "" {
		return fmt.Errorf("want BRANCH=REF, got %q", s)
	}
	b[k] = v
	return nil
}
