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

	"github.com/patchproof/patchproof/internal/secretenv"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/report"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/codediff"
	"github.com/patchproof/patchproof/workloads/bench"
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
	// ExpectHead is the commit the head must be once fetched: the one a
	// maintainer asked to run (the workflow's plan). A head that has
	// moved since is bad input, found before anything is built.
	ExpectHead string

	BackportTo []string          // branches to apply the change to (PHP-8.4, ...)
	Target     string            // run only this target of the plan (one CI job per target)
	Backports  map[string]string // branch -> an explicit backport ref

	Variants []string // nts, zts
	Builder  string   // host or docker
	Profile  string   // mysql or official
	Stages   []string // subset of StageNames(); empty means all
	Jobs     int      // concurrent builds and suite runs; 0 picks for each
	// SuiteJobs is how many builds run their test suites at once. The suites
	// mostly wait on the server, so by default every build runs at once;
	// an explicit --jobs bounds them too.
	SuiteJobs int
	Out       string // run directory: results.json, logs, trees, builds
	Cache     string // mirrors, demo, build cache; default cachedir.Default()
	// CacheMax is the size in bytes the cache's builds are pruned to
	// (--cache-max); 0 is builders.DefaultCacheMax.
	CacheMax int64
	// Limits bound a fetch (--fetch-idle-timeout, --fetch-timeout) and an
	// exported tree (--max-tree-bytes, --max-tree-files); a zero field
	// takes checkout's default.
	Limits checkout.Limits

	ExpectNTSNoop bool // changed NTS machine code fails the run
	// Bench is the benchmark's settings: "quick" (40 CPU windows of 1 s,
	// 200-request counted windows) or "report" (30 of 2 s, 1000-request
	// counted windows), for runners.
	Bench   string
	Threads int // PHP threads of the benchmark's and the concurrency check's server; default 16
	// Sweep lists the thread counts at which the benchmark also measures
	// the CPU cost of statistics (the scaling chart); none by default.
	Sweep []int
	// BenchMeasures are the benchmark's measures (cpu, locks,
	// instructions, profile); none means all.
	BenchMeasures []string
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

	// Getenv reads the environment: the GitHub token, $GITHUB_RUN_ID,
	// $GITHUB_STEP_SUMMARY, $GITHUB_ACTIONS, $PATCHPROOF_CACHE,
	// $PATCHPROOF_DEBIAN_MIRROR. Nothing else in a run reads it; child
	// processes get only what internal/childenv allows them of it. nil
	// means secretenv.Getenv: os.Getenv, but for the token main took out
	// of the environment.
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
		c.Variants = []string{"nts", "zts"}
	}
	if c.Builder == "" {
		c.Builder = "host"
	}
	if c.Profile == "" {
		c.Profile = "mysql"
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
	if c.Bench == "" {
		c.Bench = "quick"
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
// and the GitHub client to post with. The run's report stage and 'patchproof
// report' both publish with them.
func (c Config) ReportOptions() report.Options {
	c.setDefaults()
	opt := report.Options{
		Out:         c.Out,
		Stdout:      c.Stdout,
		StepSummary: c.Getenv("GITHUB_STEP_SUMMARY"),
		Post:        c.Post,
		DryRun:      c.DryRun,
		GitHub:      github.Options{BaseURL: c.GitHubAPI, Getenv: c.Getenv, Login: githubLogin(c.Getenv)},
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

// githubLogin is the account an Actions or App token posts as, for which
// GitHub will not answer GET /user: $PATCHPROOF_GITHUB_LOGIN, else the
// Actions bot under Actions.
func githubLogin(getenv func(string) string) string {
	if l := getenv("PATCHPROOF_GITHUB_LOGIN"); l != "" {
		return l
	}
	if getenv("GITHUB_ACTIONS") == "true" {
		return "github-actions[bot]"
	}
	return ""
}

// actionsRunURL is the link to the GitHub Actions run, when there is one.
func (c *Config) actionsRunURL() string {
	server, repo, id := c.Getenv("GITHUB_SERVER_URL"), c.Getenv("GITHUB_REPOSITORY"), c.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	return server + "/" + repo + "/actions/runs/" + id
}

// Demo reports whether the run validates the bundled demo.
func (c *Config) Demo() bool { return c.Repo == "" && c.PR == 0 }

// minRaceRequests is the fewest concurrent requests that make a
// concurrency check worth its name: below it, threads rarely meet.
const minRaceRequests = 100

func (c *Config) wants(stage string) bool {
	return len(c.Stages) == 0 || slices.Contains(c.Stages, stage)
}

// validate checks what can be checked before anything runs: every value's
// range and syntax, and that each ref is a name, before the plan fetches
// anything. Its errors are *results.InputError naming the flag and value.
func (c *Config) validate() error {
	if err := c.validateValues(); err != nil {
		return err
	}
	for _, s := range c.Stages {
		if !slices.Contains(StageNames(), s) {
			return &results.InputError{Input: "--stages " + strings.Join(c.Stages, ","), Err: fmt.Errorf("unknown stage %q (stages: %s)", s, strings.Join(StageNames(), ","))}
		}
	}
	for _, v := range c.Variants {
		if v != "nts" && v != "zts" {
			return &results.InputError{Input: "--variants " + strings.Join(c.Variants, ","), Err: fmt.Errorf("unknown variant %q (nts, zts)", v)}
		}
	}
	if c.Builder != "host" && c.Builder != "docker" {
		return &results.InputError{Input: "--builder " + c.Builder, Err: fmt.Errorf("unknown builder (host, docker)")}
	}
	if c.Profile != "mysql" && c.Profile != "official" {
		return &results.InputError{Input: "--profile " + c.Profile, Err: fmt.Errorf("unknown profile (mysql, official)")}
	}
	if c.Bench != "quick" && c.Bench != "report" {
		return &results.InputError{Input: "--bench " + c.Bench, Err: fmt.Errorf("unknown benchmark settings (quick, report)")}
	}
	if c.RaceRequests < 0 || (c.RaceRequests > 0 && c.RaceRequests < minRaceRequests) {
		return &results.InputError{Input: fmt.Sprintf("--race-requests %d", c.RaceRequests), Err: fmt.Errorf("want at least %d (0: the default)", minRaceRequests)}
	}
	if c.Out == "" {
		return &results.InputError{Input: "--out", Err: fmt.Errorf("no output directory given")}
	}
	if c.PR < 0 {
		return &results.InputError{Input: fmt.Sprintf("--pr %d", c.PR), Err: fmt.Errorf("not a pull request number")}
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
	if !c.Demo() && c.PR == 0 && (c.Base == "" || c.Head == "") {
		return &results.InputError{Input: "--repo " + c.Repo, Err: fmt.Errorf("--base and --head are needed with --repo")}
	}
	return c.validateRefs()
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
	for _, m := range c.BenchMeasures {
		if !slices.Contains(bench.MeasureNames(), m) {
			return &results.InputError{Input: "--bench-measures " + strings.Join(c.BenchMeasures, ","), Err: fmt.Errorf("unknown measure %q (%s)", m, strings.Join(bench.MeasureNames(), ", "))}
		}
	}
	for _, l := range []struct{ flag, v string }{{"--server-cpus", c.ServerCPUs}, {"--load-cpus", c.LoadCPUs}, {"--db-cpus", c.DBCPUs}} {
		if l.v == "" {
			continue
		}
		if err := bench.CheckCPUList(l.v); err != nil {
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
