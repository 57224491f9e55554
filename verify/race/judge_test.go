package race

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
	"github.com/patchproof/patchproof/verify/verdict/verdicttest"
	"github.com/patchproof/patchproof/workloads/concurrency"
)

func counterCheck(grew int64, dbConns int64) CounterCheck {
	return JudgeCounters(CounterRun{Requests: 10, PerRequest: map[string]int64{"a": 1, "b": 2}, Grew: map[string]int64{"a": grew, "b": 20}, DBConnections: dbConns, ConnsPerReq: 2})
}

// judged is a Result whose both sides' counters ran, their servers' logs
// read, and whose TSan comparison found diff.
func judged(base, head CounterCheck, diff RaceDiff) *Result {
	return &Result{
		Threads: 16,
		Counters: []*Counters{
			{Side: side.Base, Check: base, Run: &concurrency.Result{ChildSignalsRead: true}},
			{Side: side.Head, Check: head, Run: &concurrency.Result{ChildSignalsRead: true}},
		},
		TSan: &TSan{Diff: diff},
	}
}

// Judge is the check's every failing rule: what fails head is a
// verdict.CheckFailed (exit 1), what breaks the check a plain error (exit
// 2), recorded in Errors.
func TestJudge(t *testing.T) {
	exact, lost, work := counterCheck(10, 20), counterCheck(9, 20), counterCheck(10, 18)
	race := Report{Kind: "data race", Summary: "data race ext/mysqlnd/mysqlnd_statistics.h:42 in add"}
	for _, tt := range []struct {
		name    string
		r       *Result
		want    string // the error's message, "" for a pass
		failed  bool   // a failed check rather than an error
		wantErr []string
	}{
		{name: "passed", r: judged(exact, exact, RaceDiff{})},
		{name: "a race outside the change and one in both pass", r: judged(exact, exact, RaceDiff{NewElsewhere: []Report{race}, Both: []Report{race}})},
		{name: "head lost updates", r: judged(exact, lost, RaceDiff{}),
			want: "not safe under concurrency: head counters: 1 counter off in 10 requests, 1 short in all (a 9 of 10)", failed: true},
		{name: "base lost updates: the check is broken", r: judged(lost, lost, RaceDiff{}),
			want:    "base counters: 1 counter off in 10 requests, 1 short in all (a 9 of 10) although base takes the statistics mutex: the check cannot judge head here",
			wantErr: []string{"base counters: 1 counter off in 10 requests, 1 short in all (a 9 of 10) although base takes the statistics mutex: the check cannot judge head here"}},
		{name: "the load lost requests on head", r: judged(exact, work, RaceDiff{}),
			want:    "head counters: the database server counted 18 connections, 10 requests open 20",
			wantErr: []string{"head counters: the database server counted 18 connections, 10 requests open 20"}},
		{name: "a new race in the change's code", r: judged(exact, exact, RaceDiff{New: []Report{race, race}}),
			want: "not safe under concurrency: ThreadSanitizer: 2 new data race reports in the change's code, first data race ext/mysqlnd/mysqlnd_statistics.h:42 in add", failed: true},
		{name: "every finding, in order", r: func() *Result {
			r := judged(exact, lost, RaceDiff{New: []Report{race}})
			r.Counters[1].Run.ChildSignals = []string{"Segmentation fault (11)"}
			return r
		}(),
			want:   "not safe under concurrency: head counters: 1 counter off in 10 requests, 1 short in all (a 9 of 10); head's PHP crashed in Apache's child (Segmentation fault (11)) where base's did not; ThreadSanitizer: 1 new data race report in the change's code, first data race ext/mysqlnd/mysqlnd_statistics.h:42 in add",
			failed: true},
		{name: "a crash base has too passes", r: func() *Result {
			r := judged(exact, exact, RaceDiff{})
			r.Counters[0].Run.ChildSignals = []string{"Aborted (6)"}
			r.Counters[1].Run.ChildSignals = []string{"Aborted (6)"}
			return r
		}()},
		{name: "what could not be measured beats a finding", r: func() *Result {
			r := judged(exact, lost, RaceDiff{})
			r.TSan, r.Errors = nil, []string{"ThreadSanitizer: no TSan build of base"}
			return r
		}(), want: "ThreadSanitizer: no TSan build of base", wantErr: []string{"ThreadSanitizer: no TSan build of base"}},
		{name: "measured errors first, then the broken check's", r: func() *Result {
			r := judged(work, exact, RaceDiff{})
			r.Errors = []string{"ThreadSanitizer: no TSan build of base"}
			return r
		}(), want: "ThreadSanitizer: no TSan build of base; base counters: the database server counted 18 connections, 10 requests open 20",
			wantErr: []string{"ThreadSanitizer: no TSan build of base", "base counters: the database server counted 18 connections, 10 requests open 20"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := judge(tt.r)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Judge = %v, want nil", err)
				}
			} else {
				if err == nil {
					t.Fatalf("Judge = nil, want %q", tt.want)
				}
				msg := err.Error()
				var ce *verdict.CheckError
				if errors.As(err, &ce) {
					msg = ce.Message
				}
				if msg != tt.want || errors.Is(err, verdict.ErrCheckFailed) != tt.failed {
					t.Errorf("Judge = %q (check failed: %v), want %q (%v)", msg, errors.Is(err, verdict.ErrCheckFailed), tt.want, tt.failed)
				}
			}
			if diff := cmp.Diff(tt.wantErr, tt.r.Errors); diff != "" {
				t.Errorf("Errors (-want +got):\n%s", diff)
			}
			// Judging again changes nothing.
			again := judge(tt.r)
			if (again == nil) != (err == nil) || (err != nil && again.Error() != err.Error()) {
				t.Errorf("Judge again = %v, first %v", again, err)
			}
			if diff := cmp.Diff(tt.wantErr, tt.r.Errors); diff != "" {
				t.Errorf("Errors after judging again (-want +got):\n%s", diff)
			}
		})
	}
}

// Judge's one message tells of every target, each line naming its
// target, and an error in any target makes the check an error (exit 2)
// rather than a failure.
func TestJudgeTargets(t *testing.T) {
	exact := JudgeCounters(CounterRun{Requests: 10, PerRequest: map[string]int64{"a": 1}, Grew: map[string]int64{"a": 10}, DBConnections: 20, ConnsPerReq: 2})
	lost := JudgeCounters(CounterRun{Requests: 10, PerRequest: map[string]int64{"a": 1}, Grew: map[string]int64{"a": 9}, DBConnections: 20, ConnsPerReq: 2})
	result := func(base, head CounterCheck, errs ...string) *Result {
		return &Result{Counters: []*Counters{{Side: side.Base, Check: base}, {Side: side.Head, Check: head}}, TSan: &TSan{}, Errors: errs}
	}
	for _, tt := range []struct {
		name    string
		results map[string]*Result
		want    string // "" for a pass
		failed  bool
	}{
		{"passed", map[string]*Result{"master": result(exact, exact), "PHP-8.4": result(exact, exact)}, "", false},
		{"not run on a target", map[string]*Result{"master": result(exact, exact), "PHP-8.4": nil}, "", false},
		{"head lost updates in two targets", map[string]*Result{"master": result(exact, lost), "PHP-8.4": result(exact, lost)},
			"not safe under concurrency: master: head counters: 1 counter off in 10 requests, 1 short in all (a 9 of 10); PHP-8.4: head counters: 1 counter off in 10 requests, 1 short in all (a 9 of 10)", true},
		{"an error beats a failure", map[string]*Result{"master": result(exact, lost), "PHP-8.4": result(exact, exact, "head counters: no server", "ThreadSanitizer: no build")},
			"PHP-8.4: head counters: no server; PHP-8.4: ThreadSanitizer: no build", false},
		{"base lost updates", map[string]*Result{"master": result(lost, lost)},
			"master: base counters: 1 counter off in 10 requests, 1 short in all (a 9 of 10) although base takes the statistics mutex: the check cannot judge head here", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var targets []Target
			for _, name := range []string{"master", "PHP-8.4"} {
				if res, ok := tt.results[name]; ok {
					targets = append(targets, Target{name, res})
				}
			}
			err := Judge(targets)
			verdicttest.Judged(t, err, tt.want, tt.failed)
		})
	}
}

func TestCounterCheckString(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    CounterCheck
		want string
	}{
		{"exact", counterCheck(10, 20), "2/2 counters exact, 0 updates lost in 10 requests"},
		{"lost", JudgeCounters(CounterRun{Requests: 10, PerRequest: map[string]int64{"a": 1, "b": 2}, Grew: map[string]int64{"a": 9, "b": 17}, DBConnections: 20, ConnsPerReq: 2}),
			"2 counters off in 10 requests, 4 short in all (a 9 of 10, b 17 of 20)"},
		{"more than three off", JudgeCounters(CounterRun{Requests: 1, PerRequest: map[string]int64{"a": 1, "b": 1, "c": 1, "d": 1}, Grew: map[string]int64{}, DBConnections: 0, ConnsPerReq: 0}),
			"4 counters off in 1 requests, 4 short in all (a 0 of 1, b 0 of 1, c 0 of 1, …)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.String(); got != tt.want {
				t.Errorf("String = %q, want %q", got, tt.want)
			}
		})
	}
}

// Counters the load, not mysqlnd, got wrong are not a finding against head:
// the database server's count says the requests did not all run.
func TestFindingsLeaveTheLoadsFault(t *testing.T) {
	work := counterCheck(9, 18)
	r := judged(counterCheck(10, 20), work, RaceDiff{})
	if f := r.Findings(); len(f) != 0 {
		t.Errorf("Findings = %q, want none", f)
	}
	r.Counters[1].Check.WorkError = ""
	if f := r.Findings(); len(f) != 1 {
		t.Errorf("without the database server's word, Findings = %q, want head's counters", f)
	}
}

// On one CPU the threads take turns, and exact counters prove nothing: the
// check cannot pass there (an error, not a pass), but updates lost on one
// CPU still fail head. Base on one CPU alone breaks nothing: head decides.
func TestJudgeOneCPU(t *testing.T) {
	one := func(c CounterCheck) CounterCheck { c.CPUs = 1; return c }
	exact, lost := counterCheck(10, 20), counterCheck(9, 20)
	two := exact
	two.CPUs = 2

	r := judged(one(exact), one(exact), RaceDiff{})
	err := judge(r)
	if err == nil || errors.Is(err, verdict.ErrCheckFailed) || len(r.Errors) != 1 || r.Errors[0] != "head counters: "+oneCPUText {
		t.Errorf("exact on 1 CPU: Judge = %v, Errors %q; want the one-CPU error", err, r.Errors)
	}
	if cell := r.Cell(); !strings.Contains(cell, "counters not decided (1 CPU)") {
		t.Errorf("exact on 1 CPU: cell %q, want not decided", cell)
	}
	if err := judge(judged(one(exact), one(lost), RaceDiff{})); !errors.Is(err, verdict.ErrCheckFailed) {
		t.Errorf("lost on 1 CPU: Judge = %v, want a failed check", err)
	}
	if err := judge(judged(one(exact), two, RaceDiff{})); err != nil {
		t.Errorf("head exact on 2 CPUs: Judge = %v, want a pass", err)
	}
	if got := two.String(); got != "2/2 counters exact, 0 updates lost in 10 requests on 2 CPUs" {
		t.Errorf("String = %q", got)
	}
}

// Counters no request moved are named, gauges aside: the check says
// nothing of them.
func TestUnmovedCounters(t *testing.T) {
	c := JudgeCounters(CounterRun{Requests: 10,
		PerRequest: map[string]int64{"a": 1, "z_never": 0, "b_never": 0, "active_x": 0},
		Grew:       map[string]int64{"a": 10}, DBConnections: 20, ConnsPerReq: 2})
	if d := cmp.Diff([]string{"b_never", "z_never"}, c.Unmoved); d != "" || c.Total() != 4 {
		t.Errorf("Unmoved (-want +got):\n%s; Total %d, want 4", d, c.Total())
	}
}

// withMemory adds the phase with memory statistics on to r: base's and
// head's runs, their servers' logs read.
func withMemory(r *Result, base, head CounterCheck) *Result {
	r.Counters = append(r.Counters,
		&Counters{Side: side.Base, Memory: true, Check: base, Run: &concurrency.Result{ChildSignalsRead: true}},
		&Counters{Side: side.Head, Memory: true, Check: head, Run: &concurrency.Result{ChildSignalsRead: true}})
	return r
}

// The phase with memory statistics on is judged as the other: head off
// there fails head although it is exact without them; base off there
// breaks the check; a crash there is a crash.
func TestJudgeMemoryPhase(t *testing.T) {
	exact, lost := counterCheck(10, 20), counterCheck(9, 20)
	if err := judge(withMemory(judged(exact, exact, RaceDiff{}), exact, exact)); err != nil {
		t.Errorf("every phase exact: Judge = %v, want a pass", err)
	}
	err := judge(withMemory(judged(exact, exact, RaceDiff{}), exact, lost))
	if !errors.Is(err, verdict.ErrCheckFailed) || !strings.HasPrefix(err.Error(), "not safe under concurrency: head counters (memory statistics on): 1 counter off in 10 requests, 1 short in all (a 9 of 10)") {
		t.Errorf("head off with memory statistics on: Judge = %v, want it failed by name", err)
	}
	r := withMemory(judged(exact, exact, RaceDiff{}), lost, lost)
	if err := judge(r); err == nil || errors.Is(err, verdict.ErrCheckFailed) || !strings.HasPrefix(r.Errors[0], "base counters (memory statistics on): ") {
		t.Errorf("base off with memory statistics on: Judge = %v, errors %q, want the check broken", err, r.Errors)
	}
	r = withMemory(judged(exact, exact, RaceDiff{}), exact, exact)
	r.Counters[3].Run.ChildSignals = []string{"Segmentation fault (11)"}
	if err := judge(r); !errors.Is(err, verdict.ErrCheckFailed) || !strings.Contains(err.Error(), "head's PHP crashed") {
		t.Errorf("head crashed with memory statistics on: Judge = %v, want a failed check", err)
	}
	if r.CountersOf(side.Head) != r.Counters[1] || r.MemoryOf(side.Head) != r.Counters[3] || r.MemoryOf(side.Base) != r.Counters[2] {
		t.Error("CountersOf and MemoryOf do not pick the runs of their phase")
	}
}

// The counters listed as unmoved are those no phase of head moved: one that
// moves only with memory statistics on is not.
func TestUnmovedByEveryPhase(t *testing.T) {
	run := func(per map[string]int64) CounterCheck {
		grew := map[string]int64{}
		for k, v := range per {
			grew[k] = 10 * v
		}
		return JudgeCounters(CounterRun{Requests: 10, PerRequest: per, Grew: grew, DBConnections: 20, ConnsPerReq: 2})
	}
	off := run(map[string]int64{"a": 1, "mem_x": 0, "never": 0})
	on := run(map[string]int64{"a": 1, "mem_x": 3, "never": 0})
	r := withMemory(judged(off, off, RaceDiff{}), on, on)
	if d := cmp.Diff([]string{"never"}, r.Unmoved()); d != "" {
		t.Errorf("Unmoved (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"mem_x", "never"}, judged(off, off, RaceDiff{}).Unmoved()); d != "" {
		t.Errorf("Unmoved without the memory phase (-want +got):\n%s", d)
	}
}
