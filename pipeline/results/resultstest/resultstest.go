// Package resultstest holds Results as runs record them, for the tests of
// the packages that read them: a passing run of the demo, a failing run of
// a pull request, a second CI job's backports. Their commits are made up;
// everything else is what patchproof writes.
package resultstest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/codediff"
	"github.com/patchproof/patchproof/verify/race"
	"github.com/patchproof/patchproof/verify/suites"
	"github.com/patchproof/patchproof/workloads/phptests"
)

// PHPSrc is the repository the PR fixtures validate.
const PHPSrc = "https://github.com/php/php-src"

// The commits of the fixtures: what a demo run and a PR run record.
const (
	demoBase = "5d8a2e9c0b7f4e3a1d6c9b8a7f6e5d4c3b2a1908"
	demoHead = "9f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6"
	demoTip  = "5d8a2e9c0b7f4e3a1d6c9b8a7f6e5d4c3b2a1908"
	PRBase   = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	PRTip    = "1b2c3d4e5f60718293a4b5c6d7e8f90123456789"
	PRHead   = "2c3d4e5f60718293a4b5c6d7e8f9012345678901"
)

// Started is when the fixtures' runs started.
var Started = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *time.Time { t := Started.Add(d); return &t }

// build is a finished build of the demo tree.
func build(target string, sd side.Side, v builders.Variant, ms int64, cached bool) *builders.Build {
	ver := "PHP 8.2.32 (cli) (built: Jun  1 2025 12:03:11) (NTS)"
	if v == builders.ZTS {
		ver = "PHP 8.2.32 (cli) (built: Jun  1 2025 12:04:02) (ZTS)"
	}
	return &builders.Build{
		Label: fmt.Sprintf("%s %s/%s", target, sd, v), Side: sd, Variant: v, Profile: "mysql",
		Executor: "host", TreeHash: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", Key: "0123456789abcdef01234567",
		OK: true, Cached: cached, Dir: "/cache/builds/0123456789abcdef01234567",
		PHP: "/cache/builds/0123456789abcdef01234567/sapi/cli/php", PHPVersion: ver,
		ConfigureLine: "./configure --enable-mysqlnd --with-mysqli=mysqlnd --with-pdo-mysql=mysqlnd",
		Compiler:      "gcc (Debian 12.2.0-14) 12.2.0", DurationMS: ms,
		BuildLog: fmt.Sprintf("logs/build-%s-%s-%s.log", target, sd, v),
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

func NTSReport(changed ...codediff.FuncDiff) *codediff.Report {
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
			tests = append(tests, suites.TestResult{Name: name, Outcome: o, Reason: map[bool]string{true: "needs a replica"}[o == suites.Skip], DurationSeconds: 0.25 * float64(i+1)})
		}
		r.Add(phptests.NewSuiteRun(s.dir, tests, time.Duration(s.tests)*1500*time.Millisecond))
	}
	return r
}

func testsResult(target string, variants ...builders.Variant) *suites.Result {
	tr := &suites.Result{Server: "MariaDB 10.11.11 on 127.0.0.1:33061"}
	for _, v := range variants {
		base, head := suiteRun(fmt.Sprintf("%s-base-%s", target, v)), suiteRun(fmt.Sprintf("%s-head-%s", target, v))
		tr.Runs = append(tr.Runs, base, head)
		tr.Comparisons = append(tr.Comparisons, &suites.VariantComparison{Variant: string(v), Comparison: suites.Compare(base, head)})
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
		Profile: "mysql", ProfileText: "mysqlnd, mysqli, pdo_mysql with OpenSSL and zlib; nothing else", Jobs: 8, Stages: []string{results.StageCheckout, results.StageBuild, results.StageCodeDiff, results.StageTests, results.StageRace}, ExpectNTSNoop: true}
}

var testMachine = results.Machine{Hostname: "runner-7", CPUs: 16, CPUModel: "AMD EPYC 7763 64-Core Processor",
	Kernel: "6.1.0-31-amd64", OS: "Debian GNU/Linux 12 (bookworm)"}

// Demo is what the demo run records: 2 builds × 2 variants, NTS
// identical, ZTS touched, the suites the same, no benchmark yet.
func Demo() *results.Result {
	return &results.Result{
		SchemaVersion: results.SchemaVersion, Tool: "patchproof", Version: FixtureVersion, StartedAt: Started, FinishedAt: at(19*time.Minute + 40*time.Second),
		Status: results.StatusPassed, Settings: settings(DemoRepo, 0, true), Machine: testMachine,
		Targets: []*results.TargetResult{{
			Name: "PHP-8.2", Repo: DemoRepo,
			Base:  results.CommitRef{Ref: "PHP-8.2", Commit: demoBase, BranchTip: demoTip, IsMergeBase: true, Subject: "PHP 8.2.32"},
			Head:  results.CommitRef{Ref: "mysqlnd-atomic-stats", Commit: demoHead, Subject: "mysqlnd: relaxed atomic statistics under ZTS"},
			Trees: results.Trees{Base: "src/PHP-8.2-base-5d8a2e9c0b7f", Head: "src/PHP-8.2-head-9f1e2d3c4b5a"},
			Builds: []*builders.Build{
				build("PHP-8.2", "base", builders.NTS, 251_000, false),
				build("PHP-8.2", "base", builders.ZTS, 263_400, false),
				build("PHP-8.2", "head", builders.NTS, 38_200, false),
				build("PHP-8.2", "head", builders.ZTS, 41_900, false),
			},
			CodeDiff: &codediff.Result{NTS: NTSReport(), ZTS: ztsReport(), ExpectNTSNoop: true},
			Tests:    testsResult("PHP-8.2", builders.NTS, builders.ZTS),
			Race:     RaceResult(false),
		}},
		Stages: []*results.StageResult{
			stage(results.StageCheckout, results.StatusPassed, 0, 3100*time.Millisecond, ""),
			stage(results.StageBuild, results.StatusPassed, 3*time.Second, 9*time.Minute+55*time.Second, ""),
			stage(results.StageCodeDiff, results.StatusPassed, 10*time.Minute, 31400*time.Millisecond, ""),
			stage(results.StageTests, results.StatusPassed, 10*time.Minute+32*time.Second, 9*time.Minute+4*time.Second, ""),
			stage(results.StageRace, results.StatusPassed, 19*time.Minute+36*time.Second, 45*time.Second, ""),
			stage(results.StageBench, results.StatusSkipped, 0, 0, "not selected (--stages)"),
		},
	}
}

const DemoRepo = "demo (PHP 8.2.32 + mysqlnd atomic statistics)"

// RaceResult is the concurrency check of the demo: exact counters and no
// new race, or, racy, a head that dropped the lock and kept the plain +=:
// counters short and TSan's race in mysqlnd.
func RaceResult(racy bool) *race.Result {
	per := map[string]int64{"bytes_received": 9960, "connect_success": 2, "rows_fetched_from_server_normal": 20, "active_connections": -2,
		"mem_emalloc_count": 0, "pconnect_success": 0}
	exact := race.JudgeCounters(race.CounterRun{Requests: 20000, PerRequest: per, Grew: map[string]int64{
		"bytes_received": 199_200_000, "connect_success": 40_000, "rows_fetched_from_server_normal": 400_000, "active_connections": -40_000,
	}, DBConnections: 40_000, ConnsPerReq: 2, CPUs: 2})
	rr := &race.Result{
		Threads: 16,
		Counters: []*race.Counters{
			{Side: side.Base, Build: "PHP-8.2 base/zts", Check: exact},
			{Side: side.Head, Build: "PHP-8.2 head/zts", Check: exact},
		},
		TSan: &race.TSan{Requests: 2000, Touched: []string{"ext/mysqlnd/mysqlnd_statistics.h"}, Sides: []*race.TSanSide{
			{Side: side.Base, Build: "PHP-8.2 base/tsan", Log: "race/PHP-8.2/tsan/base.tsan.log", DurationMS: 10_100},
			{Side: side.Head, Build: "PHP-8.2 head/tsan", Log: "race/PHP-8.2/tsan/head.tsan.log", DurationMS: 6_900},
		}},
	}
	if !racy {
		return rr
	}
	rr.Counters[1].Check = race.JudgeCounters(race.CounterRun{Requests: 20000, PerRequest: per, Grew: map[string]int64{
		"bytes_received": 198_794_434, "connect_success": 40_000, "rows_fetched_from_server_normal": 399_505, "active_connections": -40_003,
	}, DBConnections: 40_000, ConnsPerReq: 2, CPUs: 2})
	// stack reads "function file:line" frames.
	stack := func(frames ...string) []race.Frame {
		var st []race.Frame
		for _, f := range frames {
			fn, loc, _ := strings.Cut(f, " ")
			file, line, _ := strings.Cut(loc, ":")
			n, _ := strconv.Atoi(line)
			st = append(st, race.Frame{Func: fn, File: file, Line: n, Module: "libphp.so"})
		}
		return st
	}
	r := race.Report{
		Kind: "data race", Summary: "data race ext/mysqlnd/mysqlnd_wireprotocol.c:1739 in php_mysqlnd_rowp_read", Count: 2,
		File: "ext/mysqlnd/mysqlnd_wireprotocol.c", Location: "Location is heap block of size 1304 at 0x… allocated by main thread",
		Accesses: []race.Access{
			{What: "Read of size 8 at 0x7b6800000600 by thread T10 (mutexes: write M42)", Stack: stack(
				"php_mysqlnd_rowp_read ext/mysqlnd/mysqlnd_wireprotocol.c:1739",
				"mysqlnd_mysqlnd_res_store_result_fetch_data_pub ext/mysqlnd/mysqlnd_result.c:689",
				"mysqlnd_mysqlnd_stmt_get_result_pub ext/mysqlnd/mysqlnd_ps.c:168")},
			{What: "Previous write of size 8 at 0x7b6800000600 by thread T7", Stack: stack(
				"php_mysqlnd_rowp_read ext/mysqlnd/mysqlnd_wireprotocol.c:1739",
				"mysqlnd_mysqlnd_stmt_store_result_pub ext/mysqlnd/mysqlnd_ps.c:100",
				"pdo_mysql_stmt_after_execute_prepared ext/pdo_mysql/mysql_statement.c:374")},
		},
	}
	rr.TSan.Sides[1].Reports = []race.Report{r}
	rr.TSan.Diff = race.CompareRaces(nil, rr.TSan.Sides[1].Reports, race.Scope{Touched: rr.TSan.Touched, Dirs: race.DefaultDirs})
	return rr
}

// Racy is the demo run of a head that only drops the ZTS lock: the
// concurrency check fails it.
func Racy() *results.Result {
	res := Demo()
	res.Status, res.ExitCode, res.Error = results.StatusFailed, 1, "checks failed: race"
	res.Targets[0].Head = results.CommitRef{Ref: "racy-stats", Commit: demoHead, Subject: "mysqlnd: drop the statistics lock under ZTS (racy fixture)"}
	res.Targets[0].Race = RaceResult(true)
	for _, s := range res.Stages {
		if s.Name == results.StageRace {
			s.Status = results.StatusFailed
			// What the stage says is the check's own line, as a run has it.
			s.Error = "not safe under concurrency: PHP-8.2: head counters: " + res.Targets[0].Race.Counters[1].Check.String()
			s.Message = s.Error
		}
	}
	return res
}

// Failing is a PR run on master in which the head changes an NTS
// function and the head ZTS build breaks.
func Failing() *results.Result {
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
		SchemaVersion: results.SchemaVersion, Tool: "patchproof", Version: FixtureVersion, StartedAt: Started, FinishedAt: at(7*time.Minute + 5*time.Second),
		Status: results.StatusFailed, ExitCode: 1, Error: "checks failed: build, codediff",
		Settings: settings(PHPSrc, 4242, false), Machine: testMachine,
		RunURL: "https://github.com/patchproof/patchproof/actions/runs/9001",
		Targets: []*results.TargetResult{{
			Name: "master", Repo: PHPSrc,
			Base: results.CommitRef{Ref: "master", Commit: PRBase, BranchTip: PRTip, IsMergeBase: true, Subject: "Merge branch 'PHP-8.4'"},
			Head: results.CommitRef{Ref: github.HeadRef(4242), Commit: PRHead, Subject: "mysqlnd: use relaxed atomics for statistics"},
			Builds: []*builders.Build{
				build("master", "base", builders.NTS, 3_100, true),
				build("master", "head", builders.NTS, 40_500, false),
				build("master", "base", builders.ZTS, 2_900, true),
				broken,
			},
			CodeDiff: &codediff.Result{NTS: NTSReport(changed), ExpectNTSNoop: true},
			Tests:    tr,
		}},
		Stages: []*results.StageResult{
			stage(results.StageCheckout, results.StatusPassed, 0, 12*time.Second, ""),
			stage(results.StageBuild, results.StatusFailed, 12*time.Second, 65*time.Second, "1 of 4 builds failed (master head/zts)"),
			stage(results.StageCodeDiff, results.StatusFailed, 77*time.Second, 9*time.Second, "master: NTS machine code changed: ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init"),
			stage(results.StageTests, results.StatusPassed, 86*time.Second, 5*time.Minute+30*time.Second, ""),
			stage(results.StageBench, results.StatusSkipped, 0, 0, "not selected (--stages)"),
		},
	}
	res.Stages[2].Warnings = []string{"head: ext/mysqlnd/mysqlnd_new.o: function f has no size; took 16 bytes up to the next symbol"}
	res.Settings.Stages = selected(res.Stages)
	return res
}

// selected are the stages a run of these stages was asked for, as its
// settings list them: all but those skipped as not selected.
func selected(stages []*results.StageResult) []string {
	var names []string
	for _, s := range stages {
		if !(s.Status == results.StatusSkipped && s.Reason == "not selected (--stages)") {
			names = append(names, s.Name)
		}
	}
	return names
}

// Backport is a second job's: the PR's change applied to PHP-8.5,
// and not applying to PHP-8.4.
func Backport() *results.Result {
	res := &results.Result{
		SchemaVersion: results.SchemaVersion, Tool: "patchproof", Version: FixtureVersion, StartedAt: Started.Add(time.Minute), FinishedAt: at(16 * time.Minute),
		Status: results.StatusFailed, ExitCode: 1, Error: "checks failed: checkout",
		Settings: settings(PHPSrc, 4242, false), Machine: testMachine,
		RunURL: "https://github.com/patchproof/patchproof/actions/runs/9001",
		Targets: []*results.TargetResult{
			{
				Name: "PHP-8.4", Repo: PHPSrc,
				Base:     results.CommitRef{Ref: "PHP-8.4", Commit: "3d4e5f60718293a4b5c6d7e8f9012345678901ab", BranchTip: "3d4e5f60718293a4b5c6d7e8f9012345678901ab"},
				Head:     results.CommitRef{Ref: "2c3d4e5f6071 onto PHP-8.4", Commit: strings.Repeat("0", 40)},
				Backport: &results.BackportResult{From: "master", FromCommit: PRHead, Branch: "PHP-8.4", Error: "patch does not apply", Conflicts: []checkout.HunkConflict{{File: "ext/mysqlnd/mysqlnd_statistics.h", Hunk: "@@ -55,9 +55,13 @@", Reason: "context does not match"}}},
			},
			{
				Name: "PHP-8.5", Repo: PHPSrc,
				Base: results.CommitRef{Ref: "PHP-8.5", Commit: "4e5f60718293a4b5c6d7e8f9012345678901abcd", BranchTip: "4e5f60718293a4b5c6d7e8f9012345678901abcd"},
				Head: results.CommitRef{Ref: "2c3d4e5f6071 onto PHP-8.5", Commit: "5f60718293a4b5c6d7e8f9012345678901abcdef", Subject: "mysqlnd: use relaxed atomics for statistics"},
				Builds: []*builders.Build{
					build("PHP-8.5", "base", builders.NTS, 240_000, false),
					build("PHP-8.5", "head", builders.NTS, 35_000, false),
				},
				CodeDiff: &codediff.Result{NTS: NTSReport(), ExpectNTSNoop: true},
				Backport: &results.BackportResult{From: "master", FromCommit: PRHead, Branch: "PHP-8.5", Applied: true, Commit: "5f60718293a4b5c6d7e8f9012345678901abcdef"},
			},
		},
		Stages: []*results.StageResult{
			stage(results.StageCheckout, results.StatusFailed, 0, 20*time.Second, "PHP-8.4: patch does not apply"),
			stage(results.StageBuild, results.StatusPassed, 20*time.Second, 4*time.Minute+35*time.Second, ""),
			stage(results.StageCodeDiff, results.StatusPassed, 5*time.Minute, 30*time.Second, ""),
			stage(results.StageTests, results.StatusSkipped, 0, 0, "not selected (--stages)"),
			stage(results.StageBench, results.StatusSkipped, 0, 0, "not selected (--stages)"),
		},
	}
	res.Targets[0].Backport.Error = "patch does not apply: 1 hunks failed: ext/mysqlnd/mysqlnd_statistics.h @@ -55,9 +55,13 @@: context does not match"
	res.Settings.Stages = selected(res.Stages)
	return res
}

// Live makes res look as results.json does before the run has ended:
// every stage done, the run's verdict not yet recorded (a run killed while
// it reports leaves this).
func Live(res *results.Result) *results.Result {
	res.Status, res.ExitCode, res.Error, res.FinishedAt = results.StatusRunning, 0, "", nil
	return res
}

// PassingPR is the demo's findings, as a run of PR 4242 on master.
func PassingPR() *results.Result {
	res := Demo()
	res.Settings = settings(PHPSrc, 4242, false)
	res.RunURL = "https://github.com/patchproof/patchproof/actions/runs/9002"
	tr := res.Targets[0]
	tr.Name, tr.Repo = "master", PHPSrc
	tr.Base = results.CommitRef{Ref: "master", Commit: PRBase, BranchTip: PRTip, IsMergeBase: true}
	tr.Head = results.CommitRef{Ref: github.HeadRef(4242), Commit: PRHead, Subject: "mysqlnd: use relaxed atomics for statistics"}
	return res
}

// Token is the token of the account the fake posts as: distinctive, so
// that a leak is easy to spot.
const Token = "ghp_ReportT0kenThatMustNeverBeSeen000001"

// PRFake serves php/php-src#4242, the pull request the PR fixtures
// validated (its head is PRHead), to the account of Token.
func PRFake(t testing.TB) *githubfake.Fake {
	t.Helper()
	f := githubfake.New(t)
	f.AddUser("patchproof-bot", Token)
	f.AddPR(githubfake.PR{
		Owner: "php", Repo: "php-src", Number: 4242, Title: "mysqlnd: use relaxed atomics for statistics",
		Base: githubfake.Branch{Ref: "master", SHA: PRTip},
		Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: PRHead},
	})
	return f
}

// Env is a fixed environment: its Get is a Getenv.
type Env map[string]string

// Get looks k up.
func (e Env) Get(k string) string { return e[k] }

// FixtureVersion is the version the fixtures' runs record, as
// internal/version writes a build from a work tree at a commit.
const FixtureVersion = "(devel) 20eb1b1c4d2a"
