package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/golden"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/codediff"
	"github.com/patchproof/patchproof/verify/suites"
)

// The commits of the fixtures: what a demo run and a PR run record.
const (
	demoBase = "5d8a2e9c0b7f4e3a1d6c9b8a7f6e5d4c3b2a1908"
	demoHead = "9f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6"
	demoTip  = "5d8a2e9c0b7f4e3a1d6c9b8a7f6e5d4c3b2a1908"
	prBase   = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	prTip    = "1b2c3d4e5f60718293a4b5c6d7e8f90123456789"
	prHead   = "2c3d4e5f60718293a4b5c6d7e8f9012345678901"
)

var started = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *time.Time { t := started.Add(d); return &t }

// build is a finished build of the demo tree.
func build(target, side string, v builders.Variant, ms int64, cached bool) *builders.Build {
	ver := "PHP 8.2.32 (cli) (built: Jun  1 2025 12:03:11) (NTS)"
	if v == builders.ZTS {
		ver = "PHP 8.2.32 (cli) (built: Jun  1 2025 12:04:02) (ZTS)"
	}
	return &builders.Build{
		Label: fmt.Sprintf("%s %s/%s", target, side, v), Side: side, Variant: v, Profile: "mysql",
		Executor: "host", TreeHash: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", Key: "0123456789abcdef01234567",
		OK: true, Cached: cached, Dir: "/cache/builds/0123456789abcdef01234567",
		PHP: "/cache/builds/0123456789abcdef01234567/sapi/cli/php", PHPVersion: ver,
		ConfigureLine: "./configure --enable-mysqlnd --with-mysqli=mysqlnd --with-pdo-mysql=mysqlnd",
		Compiler:      "gcc (Debian 12.2.0-14) 12.2.0", DurationMS: ms,
		BuildLog: fmt.Sprintf("logs/build-%s-%s-%s.log", target, side, v),
	}
}

// ztsReport is what the atomic-statistics change does under ZTS: the
// functions that updated the statistics under the mutex change.
func ztsReport() *codediff.Report {
	r := &codediff.Report{
		Objects: "ext/mysqlnd/*.o", BaseDir: "/cache/builds/base-zts", HeadDir: "/cache/builds/head-zts",
		BaseObjects: 23, HeadObjects: 23, Compared: 484, Identical: 476,
		Added: []codediff.Func{}, Removed: []codediff.Func{}, Warnings: []string{},
	}
	for _, f := range []struct {
		obj, name  string
		base, head int
	}{
		{"mysqlnd_connection.o", "mysqlnd_mysqlnd_conn_data_connect_pub", 1460, 1412},
		{"mysqlnd_connection.o", "mysqlnd_mysqlnd_conn_data_send_query_pub", 356, 332},
		{"mysqlnd_ps.o", "mysqlnd_stmt_execute_parse_response", 1210, 1170},
		{"mysqlnd_result.o", "mysqlnd_mysqlnd_res_free_result_buffers_pub", 244, 220},
		{"mysqlnd_statistics.o", "_mysqlnd_get_client_stats", 188, 172},
		{"mysqlnd_statistics.o", "mysqlnd_stats_init", 136, 140},
		{"mysqlnd_statistics.o", "mysqlnd_stats_end", 96, 72},
		{"mysqlnd_wireprotocol.o", "php_mysqlnd_read_row_ex", 512, 488},
	} {
		r.Changed = append(r.Changed, codediff.FuncDiff{
			Object: "ext/mysqlnd/" + f.obj, Name: f.name, BaseSize: f.base, HeadSize: f.head,
			Diff: fmt.Sprintf("--- base/ext/mysqlnd/%[1]s:%[2]s\n+++ head/ext/mysqlnd/%[1]s:%[2]s\n@@ -1,3 +1,2 @@\n-     0:  callq  tsrm_mutex_lock\n+     0:  lock xadd %%rax,(%%rdx)\n", f.obj, f.name),
		})
	}
	return r
}

func ntsReport(changed ...codediff.FuncDiff) *codediff.Report {
	r := &codediff.Report{
		Objects: "ext/mysqlnd/*.o", BaseDir: "/cache/builds/base-nts", HeadDir: "/cache/builds/head-nts",
		BaseObjects: 23, HeadObjects: 23, Compared: 484, Identical: 484 - len(changed),
		Changed: changed, Added: []codediff.Func{}, Removed: []codediff.Func{}, Warnings: []string{},
	}
	if r.Changed == nil {
		r.Changed = []codediff.FuncDiff{}
	}
	return r
}

// suiteRun is one build's run of the three suites.
func suiteRun(build string, fail ...string) *suites.RunResult {
	r := &suites.RunResult{Build: build}
	for _, s := range []struct {
		dir   string
		tests int
	}{{"ext/mysqli/tests", 6}, {"ext/pdo_mysql/tests", 4}} {
		var tests []suites.TestResult
		for i := range s.tests {
			name := fmt.Sprintf("%s/t%03d.phpt", s.dir, i)
			o := suites.Pass
			for _, f := range fail {
				if f == name {
					o = suites.Fail
				}
			}
			if i == s.tests-1 {
				o = suites.Skip
			}
			tests = append(tests, suites.TestResult{Name: name, Outcome: o, Reason: map[bool]string{true: "needs a replica"}[o == suites.Skip]})
		}
		r.Add(suites.NewSuiteRun(s.dir, tests, time.Duration(s.tests)*1500*time.Millisecond))
	}
	return r
}

func testsResult(target string, variants ...builders.Variant) *results.TestsResult {
	tr := &results.TestsResult{Server: "MariaDB 10.11.11 on 127.0.0.1:33061"}
	for _, v := range variants {
		base, head := suiteRun(fmt.Sprintf("%s-base-%s", target, v)), suiteRun(fmt.Sprintf("%s-head-%s", target, v))
		tr.Runs = append(tr.Runs, base, head)
		tr.Comparisons = append(tr.Comparisons, &results.VariantComparison{Variant: v, Comparison: suites.Compare(base, head)})
	}
	return tr
}

// stage is a stage's outcome as the run records it: note is the reason of
// a skip, else the stage's message.
func stage(name string, st results.Status, start, dur time.Duration, note string) *results.StageResult {
	s := &results.StageResult{Name: name, Status: st, DurationMS: dur.Milliseconds(), Log: "logs/" + name + ".log"}
	switch st {
	case results.StatusSkipped, results.StatusNotAvailable:
		s.Reason, s.Log = note, ""
	case results.StatusFailed:
		s.StartedAt = at(start)
		s.Error, s.Message = results.CheckFailed("%s", note).Error(), note
	default:
		s.StartedAt = at(start)
		s.Error, s.Message = note, note
	}
	return s
}

func settings(repo string, pr int, demo bool) results.Settings {
	return results.Settings{Repo: repo, PR: pr, Demo: demo, Variants: []string{"nts", "zts"}, Builder: "host",
		Profile: "mysql", Jobs: 8, Stages: StageNames, ExpectNTSNoop: true}
}

var testMachine = results.Machine{Hostname: "runner-7", CPUs: 16, CPUModel: "AMD EPYC 7763 64-Core Processor",
	Kernel: "6.1.0-31-amd64", OS: "Debian GNU/Linux 12 (bookworm)"}

// demoResult is what the demo run records: 2 builds × 2 variants, NTS
// identical, ZTS touched, the suites the same, no benchmark yet.
func demoResult() *results.Result {
	return &results.Result{
		Tool: "patchproof", Version: "0.1.0", StartedAt: started, FinishedAt: at(19*time.Minute + 40*time.Second),
		Status: results.StatusPassed, Settings: settings(demoRepoName, 0, true), Machine: testMachine,
		Targets: []*results.TargetResult{{
			Name: "PHP-8.2", Repo: demoRepoName,
			Base:  results.CommitRef{Ref: "PHP-8.2", Commit: demoBase, BranchTip: demoTip, IsMergeBase: true, Subject: "PHP 8.2.32"},
			Head:  results.CommitRef{Ref: "mysqlnd-atomic-stats", Commit: demoHead, Subject: "mysqlnd: relaxed atomic statistics under ZTS"},
			Trees: results.Trees{Base: "src/PHP-8.2-base-5d8a2e9c0b7f", Head: "src/PHP-8.2-head-9f1e2d3c4b5a"},
			Builds: []*builders.Build{
				build("PHP-8.2", "base", builders.NTS, 251_000, false),
				build("PHP-8.2", "base", builders.ZTS, 263_400, false),
				build("PHP-8.2", "head", builders.NTS, 38_200, false),
				build("PHP-8.2", "head", builders.ZTS, 41_900, false),
			},
			CodeDiff: &results.CodeDiffResult{NTS: ntsReport(), ZTS: ztsReport(), ExpectNTSNoop: true},
			Tests:    testsResult("PHP-8.2", builders.NTS, builders.ZTS),
		}},
		Stages: []*results.StageResult{
			stage("checkout", results.StatusPassed, 0, 3100*time.Millisecond, ""),
			stage("build", results.StatusPassed, 3*time.Second, 9*time.Minute+55*time.Second, ""),
			stage("codediff", results.StatusPassed, 10*time.Minute, 31400*time.Millisecond, ""),
			stage("tests", results.StatusPassed, 10*time.Minute+32*time.Second, 9*time.Minute+4*time.Second, ""),
			stage("bench", results.StatusNotAvailable, 0, 0, "not yet available"),
			stage("report", results.StatusPassed, 19*time.Minute+37*time.Second, 400*time.Millisecond, ""),
		},
	}
}

const demoRepoName = "demo (PHP 8.2.32 + mysqlnd atomic statistics)"

// failingResult is a PR run on master in which the head changes an NTS
// function and the head ZTS build breaks.
func failingResult() *results.Result {
	changed := codediff.FuncDiff{
		Object: "ext/mysqlnd/mysqlnd_statistics.o", Name: "mysqlnd_stats_init", BaseSize: 136, HeadSize: 140,
		Diff: "--- base/ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init\n+++ head/ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init\n@@ -1,4 +1,4 @@\n      0:  push   %rbx\n-     1:  lea    (%rip),%rdi\n-     4:          R_X86_64_PC32   \"old\"\n+     1:  lea    (%rip),%rdi\n+     4:          R_X86_64_PC32   \"new\"\n      8:  retq\n",
	}
	broken := build("master", "head", builders.ZTS, 61_300, false)
	broken.OK, broken.Dir, broken.PHP, broken.PHPVersion = false, "", "", ""
	broken.Failure = "make: exit status 2"
	broken.Errors = []builders.CompileError{
		{File: "ext/mysqlnd/mysqlnd_statistics.h", Line: 61, Column: 9, Message: "implicit declaration of function 'atomic_fetch_add_explicit' [-Werror=implicit-function-declaration]"},
		{File: "ext/mysqlnd/mysqlnd_statistics.c", Line: 204, Column: 3, Message: "'memory_order_relaxed' undeclared (first use in this function)"},
	}
	tr := testsResult("master", builders.NTS)
	res := &results.Result{
		Tool: "patchproof", Version: "0.1.0", StartedAt: started, FinishedAt: at(7*time.Minute + 5*time.Second),
		Status: results.StatusFailed, ExitCode: 1, Error: "checks failed: build, codediff",
		Settings: settings(DefaultRepo, 4242, false), Machine: testMachine,
		RunURL: "https://github.com/patchproof/patchproof/actions/runs/9001",
		Targets: []*results.TargetResult{{
			Name: "master", Repo: DefaultRepo,
			Base: results.CommitRef{Ref: "master", Commit: prBase, BranchTip: prTip, IsMergeBase: true, Subject: "Merge branch 'PHP-8.4'"},
			Head: results.CommitRef{Ref: checkout.PRRef(4242), Commit: prHead, Subject: "mysqlnd: use relaxed atomics for statistics"},
			Builds: []*builders.Build{
				build("master", "base", builders.NTS, 3_100, true),
				build("master", "head", builders.NTS, 40_500, false),
				build("master", "base", builders.ZTS, 2_900, true),
				broken,
			},
			CodeDiff: &results.CodeDiffResult{NTS: ntsReport(changed), ExpectNTSNoop: true},
			Tests:    tr,
		}},
		Stages: []*results.StageResult{
			stage("checkout", results.StatusPassed, 0, 12*time.Second, ""),
			stage("build", results.StatusFailed, 12*time.Second, 65*time.Second, "1 of 4 builds failed (master head/zts)"),
			stage("codediff", results.StatusFailed, 77*time.Second, 9*time.Second, "master: NTS machine code changed: ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init"),
			stage("tests", results.StatusPassed, 86*time.Second, 5*time.Minute+30*time.Second, ""),
			stage("bench", results.StatusNotAvailable, 0, 0, "not yet available"),
			stage("report", results.StatusPassed, 7*time.Minute, 600*time.Millisecond, ""),
		},
	}
	res.Stages[2].Warnings = []string{"head: ext/mysqlnd/mysqlnd_new.o: function f has no size; took 16 bytes up to the next symbol"}
	return res
}

// backportResult is a second job's: the PR's change applied to PHP-8.5,
// and not applying to PHP-8.4.
func backportResult() *results.Result {
	res := &results.Result{
		Tool: "patchproof", Version: "0.1.0", StartedAt: started.Add(time.Minute), FinishedAt: at(16 * time.Minute),
		Status: results.StatusFailed, ExitCode: 1, Error: "checks failed: checkout",
		Settings: settings(DefaultRepo, 4242, false), Machine: testMachine,
		RunURL: "https://github.com/patchproof/patchproof/actions/runs/9001",
		Targets: []*results.TargetResult{
			{
				Name: "PHP-8.4", Repo: DefaultRepo,
				Base:     results.CommitRef{Ref: "PHP-8.4", Commit: "3d4e5f60718293a4b5c6d7e8f9012345678901ab", BranchTip: "3d4e5f60718293a4b5c6d7e8f9012345678901ab"},
				Head:     results.CommitRef{Ref: "2c3d4e5f6071 onto PHP-8.4", Commit: strings.Repeat("0", 40)},
				Backport: &results.BackportResult{From: "master", Branch: "PHP-8.4", Error: "patch does not apply", Conflicts: []checkout.HunkConflict{{File: "ext/mysqlnd/mysqlnd_statistics.h", Hunk: "@@ -55,9 +55,13 @@", Reason: "context does not match"}}},
			},
			{
				Name: "PHP-8.5", Repo: DefaultRepo,
				Base: results.CommitRef{Ref: "PHP-8.5", Commit: "4e5f60718293a4b5c6d7e8f9012345678901abcd", BranchTip: "4e5f60718293a4b5c6d7e8f9012345678901abcd"},
				Head: results.CommitRef{Ref: "2c3d4e5f6071 onto PHP-8.5", Commit: "5f60718293a4b5c6d7e8f9012345678901abcdef", Subject: "mysqlnd: use relaxed atomics for statistics"},
				Builds: []*builders.Build{
					build("PHP-8.5", "base", builders.NTS, 240_000, false),
					build("PHP-8.5", "head", builders.NTS, 35_000, false),
				},
				CodeDiff: &results.CodeDiffResult{NTS: ntsReport(), ExpectNTSNoop: true},
				Backport: &results.BackportResult{From: "master", Branch: "PHP-8.5", Applied: true, Commit: "5f60718293a4b5c6d7e8f9012345678901abcdef"},
			},
		},
		Stages: []*results.StageResult{
			stage("checkout", results.StatusFailed, 0, 20*time.Second, "PHP-8.4: patch does not apply"),
			stage("build", results.StatusPassed, 20*time.Second, 4*time.Minute+35*time.Second, ""),
			stage("codediff", results.StatusPassed, 5*time.Minute, 30*time.Second, ""),
			stage("tests", results.StatusSkipped, 0, 0, "not selected (--stages)"),
			stage("bench", results.StatusNotAvailable, 0, 0, "not yet available"),
			stage("report", results.StatusPassed, 15*time.Minute, 500*time.Millisecond, ""),
		},
	}
	res.Targets[0].Backport.Error = "patch does not apply: 1 hunks failed: ext/mysqlnd/mysqlnd_statistics.h @@ -55,9 +55,13 @@: context does not match"
	return res
}

// roundTrip passes results through results.json, as the report command
// reads them.
func roundTrip(t *testing.T, rs ...*results.Result) []*results.Result {
	t.Helper()
	var out []*results.Result
	for i, res := range rs {
		p := filepath.Join(t.TempDir(), fmt.Sprintf("results-%d.json", i))
		if err := res.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		back, err := results.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, back)
	}
	return out
}

func TestRenderSummaryGolden(t *testing.T) {
	for _, tt := range []struct {
		name    string
		results []*results.Result
	}{
		{"demo.md", []*results.Result{demoResult()}},
		{"failing.md", []*results.Result{failingResult()}},
		{"merged.md", []*results.Result{backportResult(), failingResult()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := RenderSummary(&b, tt.results); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "report", tt.name), b.Bytes())
			// What the report command reads renders the same.
			var again bytes.Buffer
			if err := RenderSummary(&again, roundTrip(t, tt.results...)); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(b.String(), again.String()); d != "" {
				t.Errorf("rendered from results.json (-direct +json):\n%s", d)
			}
		})
	}
}

func TestRenderSummaryContent(t *testing.T) {
	render := func(rs ...*results.Result) string {
		var b bytes.Buffer
		if err := RenderSummary(&b, rs); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	demo := render(demoResult())
	failing := render(failingResult())
	merged := render(backportResult(), failingResult())
	for _, tt := range []struct {
		name, doc string
		want      []string
	}{
		{"demo verdict and NTS", demo, []string{"## ✅ patchproof: passed", "✅ 484/484 identical", "8 changed (of 484)", "4/4 built"}},
		{"demo not run", demo, []string{"Not run: bench — not yet available."}},
		{"failing verdict", failing, []string{"## ❌ patchproof: a check failed", "**codediff** failed: master: NTS machine code changed", "❌ 483/484 identical, 1 changed"}},
		{"diff folded", failing, []string{"<details><summary><code>mysqlnd_stats_init</code>", "```diff\n--- base/ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init"}},
		{"compile error file:line", failing, []string{"ext/mysqlnd/mysqlnd_statistics.h:61:9: error: implicit declaration", "❌ make: exit status 2"}},
		{"run link", failing, []string{"[run](https://github.com/patchproof/patchproof/actions/runs/9001)", "[php/php-src#4242](https://github.com/php/php-src/pull/4242)"}},
		{"conflict named", merged, []string{"`ext/mysqlnd/mysqlnd_statistics.h` | `@@ -55,9 +55,13 @@` | context does not match", "❌ 1 hunk failed"}},
		{"merged job names", merged, []string{"### Stages: PHP-8.5+PHP-8.4", "### Stages: master"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.doc, w) {
					t.Errorf("summary lacks %q", w)
				}
			}
		})
	}
	// Targets in a stable order: master, then release branches newest first.
	iMaster, i85, i84 := strings.Index(merged, "### master"), strings.Index(merged, "### PHP-8.5"), strings.Index(merged, "### PHP-8.4")
	if !(iMaster < i85 && i85 < i84) {
		t.Errorf("targets out of order: master at %d, PHP-8.5 at %d, PHP-8.4 at %d", iMaster, i85, i84)
	}
	// The same results in another order render the same targets in the same order.
	swapped := render(failingResult(), backportResult())
	if strings.Index(swapped, "### master") > strings.Index(swapped, "### PHP-8.5") {
		t.Error("target order depends on the order of the results")
	}
}

func TestVerdictOf(t *testing.T) {
	running := demoResult()
	running.Status, running.FinishedAt = results.StatusRunning, nil
	running.Stages[5].Status = results.StatusRunning // the report, rendering
	errored := demoResult()
	errored.Status, errored.Error = results.StatusError, "tests: mariadb did not start"
	for _, tt := range []struct {
		name    string
		results []*results.Result
		want    results.Verdict
	}{
		{"passed", []*results.Result{demoResult()}, results.Verdict{Status: results.StatusPassed}},
		{"a live run ignores the report stage", []*results.Result{running}, results.Verdict{Status: results.StatusPassed}},
		{"failed", []*results.Result{failingResult()}, results.Verdict{Status: results.StatusFailed, Reason: "checks failed: build, codediff"}},
		{"worst of two", []*results.Result{demoResult(), failingResult()}, results.Verdict{Status: results.StatusFailed, Reason: "master: checks failed: build, codediff"}},
		{"error beats failure", []*results.Result{failingResult(), errored}, results.Verdict{Status: results.StatusError, Reason: "PHP-8.2: tests: mariadb did not start"}},
		{"none", nil, results.Verdict{Status: results.StatusError, Reason: "no results"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, results.VerdictOf(tt.results)); d != "" {
				t.Errorf("verdict (-want +got):\n%s", d)
			}
		})
	}
}

func TestStageVerdictMatchesFinish(t *testing.T) {
	// The report renders the verdict before finish records it; both must agree.
	for _, res := range []*results.Result{demoResult(), failingResult(), backportResult()} {
		r, _ := newTestRun(t, Config{})
		r.Result.Stages = res.Stages
		finish(t.Context(), r)
		v := results.StageVerdict(res.Stages)
		if r.Result.Status != v.Status || r.Result.Error != v.Reason || r.Result.ExitCode != v.ExitCode() {
			t.Errorf("finish: %s %q %d; report: %s %q %d", r.Result.Status, r.Result.Error, r.Result.ExitCode, v.Status, v.Reason, v.ExitCode())
		}
	}
}

func TestChartBar(t *testing.T) {
	for _, tt := range []struct {
		cells float64
		want  string
	}{
		{0, strings.Repeat(" ", chartWidth)},
		{0.01, "▏" + strings.Repeat(" ", chartWidth-1)},
		{1.5, "█▌" + strings.Repeat(" ", chartWidth-2)},
		{chartWidth, strings.Repeat("█", chartWidth)},
	} {
		if got := chartBar(tt.cells); got != tt.want {
			t.Errorf("chartBar(%v) = %q, want %q", tt.cells, got, tt.want)
		}
	}
}

func TestParseRepoURL(t *testing.T) {
	for _, tt := range []struct {
		in                string
		owner, name, host string
		ok                bool
	}{
		{"https://github.com/php/php-src", "php", "php-src", "github.com", true},
		{"https://github.com/php/php-src.git/", "php", "php-src", "github.com", true},
		{"git@github.com:php/php-src.git", "php", "php-src", "github.com", true},
		{"ssh://git@ghe.example.com/php/php-src", "php", "php-src", "ghe.example.com", true},
		{"/home/me/php-src", "", "", "", false},
		{"file:///srv/php-src.git", "", "", "", false},
		{demoRepoName, "", "", "", false},
		{"https://github.com/php", "", "", "", false},
	} {
		owner, name, host, ok := parseRepoURL(tt.in)
		if owner != tt.owner || name != tt.name || host != tt.host || ok != tt.ok {
			t.Errorf("parseRepoURL(%q) = %q %q %q %v", tt.in, owner, name, host, ok)
		}
	}
}

func TestCommentBodyFitsGitHub(t *testing.T) {
	res := failingResult()
	// A change that touches every NTS function: 400-line diffs each.
	var diff strings.Builder
	for i := range 400 {
		fmt.Fprintf(&diff, "-  %4x:  mov    %%rax,%%rbx\n", i)
	}
	var changed []codediff.FuncDiff
	for i := range 60 {
		changed = append(changed, codediff.FuncDiff{Object: "ext/mysqlnd/mysqlnd_ps.o", Name: fmt.Sprintf("f%02d", i), Diff: diff.String()})
	}
	res.Targets[0].CodeDiff.NTS = ntsReport(changed...)
	var full bytes.Buffer
	if err := RenderSummary(&full, []*results.Result{res}); err != nil {
		t.Fatal(err)
	}
	body, err := commentBody([]*results.Result{res}, full.String())
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(body)); n > maxComment {
		t.Errorf("comment is %d characters, more than %d", n, maxComment)
	}
	if !strings.Contains(body, "- `f59` in `ext/mysqlnd/mysqlnd_ps.o`") || !strings.Contains(body, "would not fit in a comment") {
		t.Error("the compact comment does not list every changed function and say where the diffs are")
	}
	if !strings.Contains(body, "## ❌ patchproof: a check failed") {
		t.Error("the compact comment lost its verdict")
	}
}

func TestResultsJSONHasNewFields(t *testing.T) {
	// results.json is a published interface: what the report reads back
	// must be what was written.
	res := failingResult()
	back := roundTrip(t, res)[0]
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(back)
	if d := cmp.Diff(string(a), string(b)); d != "" {
		t.Errorf("round trip (-wrote +read):\n%s", d)
	}
}
