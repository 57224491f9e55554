package pipeline

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/ghactions"
	"github.com/patchproof/patchproof/internal/secretenv"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/report"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/abi"
	"github.com/patchproof/patchproof/verify/codediff"
	"github.com/patchproof/patchproof/workloads/bench"
	"github.com/patchproof/patchproof/workloads/concurrency"
)

// DefaultRepo is the repository --pr refers to.
const DefaultRepo = "https://github.com/php/php-src"

// Config is everything a run needs, built from flags by cmd/patchproof. The
// zero value of every field but Out works; defaults live in setDefaults.
type Config struct {
	Repo string // URL or local path; "" with PR == 0 means the bundled demo
	PR   int    // a pull request of Repo (default DefaultRepo)
	Base string // base branch or ref; with PR, taken from GitHub when empty
	Head string // head ref; with PR, refs/pull/N/head
	// RerunFlags are the settings given on the command line that a rerun
	// repeats (results.Settings.Flags).
	RerunFlags []string
	// ExpectHead is the commit the head must be once fetched: the one a
	// maintainer asked to run (the workflow's plan). A head that has
	// moved since is bad input, found before anything is built.
	ExpectHead string

	BackportTo []string // branches to apply the change to (PHP-8.4, ...)
	// MergeUp are the higher branches a change to the lowest one is merged
	// up into, in order, as php-src merges PHP-8.4 into PHP-8.5 and that
	// into master: each a target of the change merged so.
	MergeUp   []string
	Target    string            // run only this target of the plan (one CI job per target)
	Backports map[string]string // branch -> an explicit backport ref

	Variants []builders.Variant    // nts, zts (builders.ParseVariant)
	Builder  builders.ExecutorKind // host or docker
	Profile  builders.Profile      // mysql or official
	Stages   StageSet              // the zero value selects every stage
	Jobs     int                   // concurrent builds and suite runs; 0 picks for each
	// SuiteJobs is how many builds run their test suites at once, each
	// against a MariaDB of its own. The suites mostly wait on the server,
	// so by default every build runs at once; an explicit --jobs bounds
	// them too.
	SuiteJobs int
	Out       string // run directory: results.json, logs, trees, builds
	Cache     string // mirrors, demo, build cache; default cachedir.Default()
	// CacheMax is the size in bytes the cache's builds are pruned to
	// (--cache-max); 0 is builders.DefaultCacheMax.
	CacheMax int64
	// FreshBuilds builds every build from its source, configure included:
	// no head made from its base's tree, no ThreadSanitizer build from
	// its ZTS build's (--fresh-builds).
	FreshBuilds bool
	// Limits bound a fetch (--fetch-idle-timeout, --fetch-timeout) and an
	// exported tree (--max-tree-bytes, --max-tree-files); a zero field
	// takes checkout's default.
	Limits checkout.Limits

	ExpectNTSNoop bool // changed NTS machine code fails the run
	// ABI is what an ABI break does to a stable branch's target (--abi):
	// fail by default, warn, or off.
	ABI abi.Mode
	// Bench is the benchmark's settings: BenchQuick by default, or
	// BenchReport for runners.
	Bench   BenchMode
	Threads int // PHP threads of the benchmark's and the concurrency check's server; default 16
	// Sweep lists the thread counts at which the benchmark also measures
	// the CPU cost of statistics (the scaling chart); none by default.
	Sweep []int
	// BenchMeasures are the benchmark's measures (bench.ParseMeasure: cpu,
	// locks, instructions, profile); none means all.
	BenchMeasures []bench.Measure
	// AA benchmarks base against itself as if it were head (A/A), to
	// measure how often the benchmark gives a false verdict.
	AA bool
	// NoPin leaves the benchmark unpinned on a small machine, where by
	// default it pins the server to one half of the CPUs.
	NoPin bool
	// RaceRequests is how many requests the concurrency check serves at
	// once on each ZTS build; default concurrency.DefaultRequests.
	RaceRequests int
	Passes       int // benchmark passes; default by Bench
	// CPU pinning of the benchmark's server, load and database (taskset
	// lists); all empty pins by default on a small machine (see NoPin).
	ServerCPUs, LoadCPUs, DBCPUs string
	Objects                      string // codediff object glob, relative to a build dir

	Post bool // post the PR comment and commit status
	// PostTo is the PR to post on when it is not the one validated, as
	// OWNER/REPO#N or a PR's URL: the demo, posted as evidence on a PR.
	PostTo string
	DryRun bool // print what would be posted instead
	// GitHubAPI is the REST API root posts go to: "" means
	// $PATCHPROOF_GITHUB_API, else https://api.github.com/.
	GitHubAPI string

	// Getenv reads the run's settings from the environment: the GitHub
	// token ($GITHUB_TOKEN, $GH_TOKEN), $PATCHPROOF_GITHUB_API,
	// $PATCHPROOF_GITHUB_LOGIN, $PATCHPROOF_CACHE, $PATCHPROOF_DEBIAN_MIRROR,
	// and from GitHub Actions $GITHUB_ACTIONS, $GITHUB_RUN_ID,
	// $GITHUB_SERVER_URL, $GITHUB_REPOSITORY and $GITHUB_STEP_SUMMARY. No
	// other setting comes from the environment; the processes a run starts
	// get only what internal/childenv allows them of it. nil means
	// secretenv.Getenv: os.Getenv, but for the token main took out of the
	// environment.
	Getenv func(string) string

	Stdout, Stderr io.Writer

	// Parsed once by setDefaults: Repo when it is on GitHub, and PostTo.
	repo      github.Repo
	onGitHub  bool
	postTo    github.PullRequest
	postToErr error
	// githubAPIFrom names where GitHubAPI came from, for its errors.
	githubAPIFrom string
}

func (c *Config) setDefaults() {
	if len(c.Variants) == 0 {
		c.Variants = []builders.Variant{builders.NTS, builders.ZTS}
	}
	if c.Builder == "" {
		c.Builder = builders.KindHost
	}
	if c.Profile == "" {
		c.Profile = builders.ProfileMySQL
	}
	if c.SuiteJobs <= 0 {
		c.SuiteJobs = c.Jobs
		if c.Jobs <= 0 {
			c.SuiteJobs = 4
		}
	}
	if c.Jobs == 0 { // a negative one is validate's to reject
		c.Jobs = max(1, runtime.NumCPU()/2)
	}
	if c.RaceRequests == 0 { // likewise: the memory phase quarters this
		c.RaceRequests = concurrency.DefaultRequests
	}
	if c.Bench == "" {
		c.Bench = BenchQuick
	}
	if c.Objects == "" {
		c.Objects = "ext/mysqlnd/*.o"
	}
	if c.PR > 0 && c.Repo == "" {
		c.Repo = DefaultRepo
	}
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
	if c.Getenv == nil {
		c.Getenv = secretenv.Getenv
	}
	if c.githubAPIFrom == "" {
		c.githubAPIFrom = "--github-api"
		if c.GitHubAPI == "" {
			c.GitHubAPI, c.githubAPIFrom = c.Getenv("PATCHPROOF_GITHUB_API"), "$PATCHPROOF_GITHUB_API"
		}
	}
	c.repo, c.onGitHub = github.ParseRepo(c.Repo)
	if c.PostTo != "" {
		c.postTo, c.postToErr = github.ParsePullRequest(c.PostTo)
	}
}

// ReportOptions are the report's options for c: where the summary goes
// (Out, else Stdout; $GITHUB_STEP_SUMMARY) and, with Post, the pull request
// and the GitHub client to post with. The report that ends a run and
// 'patchproof report' both publish with them. Under GitHub Actions what
// goes to Stdout (the summary, a dry run's comment) is printed with the
// runner's commands stopped: its lines quote the tree under test, and the
// report job that prints it holds a token that writes.
func (c Config) ReportOptions() report.Options {
	c.setDefaults()
	stdout := c.Stdout
	if c.Getenv("GITHUB_ACTIONS") == "true" {
		stdout = ghactions.Verbatim(stdout)
	}
	opt := report.Options{
		Out:         c.Out,
		Stdout:      stdout,
		StepSummary: c.Getenv("GITHUB_STEP_SUMMARY"),
		Post:        c.Post,
		DryRun:      c.DryRun,
		GitHub:      github.Options{BaseURL: c.GitHubAPI, Getenv: c.Getenv, Login: GitHubLogin(c.Getenv), Peers: []string{github.ActionsLogin}},
		RunID:       c.Getenv("GITHUB_RUN_ID"),
	}
	switch {
	case c.PostTo != "":
		opt.PR = c.postTo
	default:
		opt.PR.Number = c.PR
		if c.onGitHub {
			opt.PR.Repo = c.repo
		} else if c.Repo != "" {
			opt.NotOnGitHub = c.Repo
		}
	}
	return opt
}

// GitHubLogin is the account an Actions or App token posts as, for which
// GitHub will not answer GET /user: $PATCHPROOF_GITHUB_LOGIN, else the
// Actions bot under Actions.
func GitHubLogin(getenv func(string) string) string {
	if l := getenv("PATCHPROOF_GITHUB_LOGIN"); l != "" {
		return l
	}
	if getenv("GITHUB_ACTIONS") == "true" {
		return github.ActionsLogin
	}
	return ""
}

// RunURL is the link to the GitHub Actions run this process is a job of,
// from its environment (Getenv); "" outside Actions.
func (c Config) RunURL() string {
	c.setDefaults()
	return ActionsRunURL(c.Getenv)
}

// ActionsRunURL is the link to the GitHub Actions run the process is a job
// of, from the environment the runner sets; "" outside Actions.
func ActionsRunURL(getenv func(string) string) string {
	server, repo, id := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	return strings.TrimSuffix(server, "/") + "/" + repo + "/actions/runs/" + id
}

// Demo reports whether the run validates the bundled demo.
func (c *Config) Demo() bool { return c.Repo == "" && c.PR == 0 }

// MinRaceRequests is the fewest concurrent requests that make a
// concurrency check worth its name: below it, threads rarely meet.
const MinRaceRequests = 100

// The most of each count a run takes: far above what a runner uses (the
// defaults are 16 threads, 40 passes, 20000 requests), and below what
// would run for days or exhaust the machine's memory and processes
// before the error came. The flags' help names them.
const (
	MaxJobs         = 256     // --jobs
	MaxThreads      = 256     // --threads, each count of a list
	MaxPasses       = 1000    // --passes: 1000 of 2 s is over half an hour a side
	MaxRaceRequests = 1000000 // --race-requests
)

// wants reports whether --stages selected s.
func (c *Config) wants(s Stage) bool { return c.Stages.Has(s.String()) }

// BenchMode is the benchmark's settings, by --bench's names.
type BenchMode string

const (
	// BenchQuick is 40 CPU windows of 1 s and 200-request counted
	// windows: the default.
	BenchQuick BenchMode = "quick"
	// BenchReport is 30 CPU windows of 2 s and 1000-request counted
	// windows, for runners.
	BenchReport BenchMode = "report"
)

// ParseBenchMode reads --bench: quick or report.
func ParseBenchMode(s string) (BenchMode, error) {
	switch m := BenchMode(s); m {
	case BenchQuick, BenchReport:
		return m, nil
	}
	return "", fmt.Errorf("unknown benchmark settings %q (quick, report)", s)
}

// StageSet is the stages a run selects (--stages). The zero value selects
// every stage.
type StageSet struct {
	names []string // as given, in the order given; nil with all
	some  bool     // names says which; false selects all
}

// ParseStageSet reads --stages' items: each the name of a stage of the
// list (StageNames), or "report", which selects nothing: the report is
// every run's last step, and scripts written when it was a stage still
// name it.
func ParseStageSet(items []string) (StageSet, error) {
	set := StageSet{names: []string{}, some: true}
	for i, s := range items {
		if slices.Contains(items[:i], s) {
			return StageSet{}, fmt.Errorf("stage %q is listed twice", s)
		}
		switch {
		case s == reportStep:
		case slices.Contains(StageNames(), s):
			set.names = append(set.names, s)
		default:
			return StageSet{}, fmt.Errorf("unknown stage %q (stages: %s)", s, strings.Join(StageNames(), ","))
		}
	}
	return set, nil
}

// Has reports whether the set selects the stage named name.
func (s StageSet) Has(name string) bool { return !s.some || slices.Contains(s.names, name) }

// Names are the stages selected: as given, or every stage's in order.
func (s StageSet) Names() []string {
	if !s.some {
		return StageNames()
	}
	return slices.Clone(s.names)
}

// validate checks what can be checked before anything runs: every value's
// range and syntax, and that each ref is a name, before the plan fetches
// anything. Its errors are *results.InputError naming the flag and value.
func (c *Config) validate() error {
	if err := c.validateValues(); err != nil {
		return err
	}
	for i, v := range c.Variants {
		if slices.Contains(c.Variants[:i], v) {
			return &results.InputError{Input: "--variants " + joinVariants(c.Variants), Err: fmt.Errorf("%q is listed twice", v)}
		}
	}
	for i, b := range c.BackportTo {
		if slices.Contains(c.BackportTo[:i], b) {
			return &results.InputError{Input: "--backport-to " + strings.Join(c.BackportTo, ","), Err: fmt.Errorf("%q is listed twice", b)}
		}
	}
	for i, b := range c.MergeUp {
		input := "--merge-up " + strings.Join(c.MergeUp, ",")
		switch {
		case slices.Contains(c.MergeUp[:i], b):
			return &results.InputError{Input: input, Err: fmt.Errorf("%q is listed twice", b)}
		case slices.Contains(c.BackportTo, b):
			return &results.InputError{Input: input, Err: fmt.Errorf("%q is in --backport-to too: a branch the change is taken to one way", b)}
		case b == c.Base:
			return &results.InputError{Input: input, Err: fmt.Errorf("%q is the base branch itself", b)}
		}
	}
	// The run's placement is made from it (placementOf).
	if _, err := builders.ParseExecutorKind(string(c.Builder)); err != nil {
		return &results.InputError{Input: "--builder " + string(c.Builder), Err: err}
	}
	if c.RaceRequests < 0 || (c.RaceRequests > 0 && c.RaceRequests < MinRaceRequests) {
		return &results.InputError{Input: fmt.Sprintf("--race-requests %d", c.RaceRequests), Err: fmt.Errorf("want at least %d (0: the default)", MinRaceRequests)}
	}
	if c.Out == "" {
		return &results.InputError{Input: "--out", Err: fmt.Errorf("no output directory given")}
	}
	if c.PR < 0 {
		return &results.InputError{Input: fmt.Sprintf("--pr %d", c.PR), Err: fmt.Errorf("not a pull request number")}
	}
	// Both only change what --post does: without it they would be
	// ignored, and the one who gave them would believe a post was sent
	// elsewhere, or that none would be.
	if !c.Post && c.PostTo != "" {
		return &results.InputError{Input: "--post-to " + c.PostTo, Err: errors.New("only says where --post posts: give --post too")}
	}
	if !c.Post && c.DryRun {
		return &results.InputError{Input: "--dry-run", Err: errors.New("only changes what --post does: give --post too")}
	}
	if c.postToErr != nil {
		return &results.InputError{Input: "--post-to " + c.PostTo, Err: c.postToErr}
	}
	if c.Post && c.PR == 0 && c.PostTo == "" {
		return &results.InputError{Input: "--post", Err: fmt.Errorf("there is no pull request to post to: give --pr N or --post-to OWNER/REPO#N, or post a finished run with 'patchproof report --post --pr N --repo URL'")}
	}
	if c.ExpectHead != "" && (!plumbing.IsHash(c.ExpectHead) || strings.ToLower(c.ExpectHead) != c.ExpectHead) {
		return &results.InputError{Input: "--expect-head " + c.ExpectHead, Err: errors.New("want a full commit hash (40 lowercase hex digits)")}
	}
	// The demo has refs of its own: a --base or --head without --repo or
	// --pr names refs of a repository the run was not told of.
	if c.Demo() {
		for _, r := range []struct{ flag, ref string }{{"--base", c.Base}, {"--head", c.Head}} {
			if r.ref != "" {
				return &results.InputError{Input: r.flag + " " + r.ref, Err: errors.New("needs --repo or --pr (without them patchproof validates the bundled demo, with its own refs)")}
			}
		}
	}
	if !c.Demo() && c.PR == 0 && (c.Base == "" || c.Head == "") {
		return &results.InputError{Input: "--repo " + c.Repo, Err: fmt.Errorf("--base and --head are needed with --repo")}
	}
	return c.validateRefs()
}

func joinVariants(vs []builders.Variant) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ",")
}

// validateValues checks the numbers, CPU lists, the objects glob and the
// GitHub API URL.
func (c *Config) validateValues() error {
	for _, n := range []struct {
		flag string
		v    int
	}{{"--jobs", c.Jobs}, {"--threads", c.Threads}, {"--passes", c.Passes}} {
		if n.v < 0 {
			return &results.InputError{Input: fmt.Sprintf("%s %d", n.flag, n.v), Err: errors.New("must be 1 or more (0 or none: the default)")}
		}
	}
	for _, n := range []struct {
		flag   string
		v, max int
	}{{"--jobs", c.Jobs, MaxJobs}, {"--threads", c.Threads, MaxThreads}, {"--passes", c.Passes, MaxPasses}, {"--race-requests", c.RaceRequests, MaxRaceRequests}} {
		if n.v > n.max {
			return &results.InputError{Input: fmt.Sprintf("%s %d", n.flag, n.v), Err: fmt.Errorf("at most %d", n.max)}
		}
	}
	for _, n := range c.Sweep {
		if n < 1 || n > MaxThreads {
			return &results.InputError{Input: "--threads " + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c.Sweep)), ","), "[]"), Err: fmt.Errorf("%d: a thread count is 1 to %d", n, MaxThreads)}
		}
	}
	for _, l := range []struct {
		flag string
		v    int64
		text string
	}{
		{"--fetch-idle-timeout", int64(c.Limits.FetchIdle), c.Limits.FetchIdle.String()},
		{"--fetch-timeout", int64(c.Limits.FetchTotal), c.Limits.FetchTotal.String()},
		{"--max-tree-bytes", c.Limits.TreeBytes, fmt.Sprint(c.Limits.TreeBytes)},
		{"--max-tree-files", int64(c.Limits.TreeFiles), fmt.Sprint(c.Limits.TreeFiles)},
	} {
		if l.v < 0 {
			return &results.InputError{Input: l.flag + " " + l.text, Err: errors.New("must be more than 0 (0: the default)")}
		}
	}
	for _, l := range []struct{ flag, v string }{{"--server-cpus", c.ServerCPUs}, {"--load-cpus", c.LoadCPUs}, {"--db-cpus", c.DBCPUs}} {
		if l.v == "" {
			continue
		}
		if err := bench.CheckCPUList(l.v); err != nil {
			return &results.InputError{Input: l.flag + " " + l.v, Err: err}
		}
		if err := bench.CheckCPUsUsable(l.v); err != nil {
			return &results.InputError{Input: l.flag + " " + l.v, Err: err}
		}
	}
	if err := codediff.CheckObjects(c.Objects); err != nil {
		return &results.InputError{Input: "--objects " + c.Objects, Err: err}
	}
	return c.validateGitHubAPI()
}

// validateGitHubAPI checks the GitHub API root, given or from the
// environment.
func (c *Config) validateGitHubAPI() error {
	if c.GitHubAPI == "" {
		return nil
	}
	if err := github.CheckBaseURL(c.GitHubAPI); err != nil {
		return &results.InputError{Input: c.githubAPIFrom + " " + c.GitHubAPI, Err: err}
	}
	return nil
}

// validateRefs checks that every ref given is a name, not a pattern or a
// revision: the plan fetches them as they are.
func (c *Config) validateRefs() error {
	type given struct{ input, ref string }
	var refs []given
	// --base and --head may be left out: the demo's, or the PR's.
	if c.Base != "" {
		refs = append(refs, given{"--base " + c.Base, c.Base})
	}
	if c.Head != "" {
		refs = append(refs, given{"--head " + c.Head, c.Head})
	}
	for _, b := range c.BackportTo {
		refs = append(refs, given{"--backport-to " + strings.Join(c.BackportTo, ","), b})
	}
	for _, b := range c.MergeUp {
		refs = append(refs, given{"--merge-up " + strings.Join(c.MergeUp, ","), b})
	}
	for _, b := range slices.Sorted(maps.Keys(c.Backports)) {
		input := "--backport " + b + "=" + c.Backports[b]
		refs = append(refs, given{input, b}, given{input, c.Backports[b]})
	}
	if c.Target != "" {
		refs = append(refs, given{"--target " + c.Target, c.Target})
	}
	for _, r := range refs {
		if err := checkout.CheckRefName(r.ref); err != nil {
			return &results.InputError{Input: r.input, Err: err}
		}
	}
	return nil
}

// ValidateReport checks the flags 'patchproof report' shares with a run
// (--pr, --post-to, --github-api) before anything is read or written.
func (c *Config) ValidateReport() error {
	c.setDefaults()
	if c.PR < 0 {
		return &results.InputError{Input: fmt.Sprintf("--pr %d", c.PR), Err: fmt.Errorf("not a pull request number")}
	}
	if c.postToErr != nil {
		return &results.InputError{Input: "--post-to " + c.PostTo, Err: c.postToErr}
	}
	return c.validateGitHubAPI()
}
