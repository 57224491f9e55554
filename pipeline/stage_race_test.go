package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/race"
	"github.com/patchproof/patchproof/verify/verdict"
	"github.com/patchproof/patchproof/workloads/concurrency"
)

// Without a ZTS pair with the Apache module there is nothing to check
// under concurrency: the stage says so instead of passing.
func TestRaceStageSkipsWithoutZTS(t *testing.T) {
	for _, tt := range []struct {
		name   string
		builds []*builders.Build
	}{
		{"NTS only", []*builders.Build{
			{Side: "base", Variant: builders.NTS, OK: true}, {Side: "head", Variant: builders.NTS, OK: true},
		}},
		{"head ZTS broke", []*builders.Build{
			{Side: "base", Variant: builders.ZTS, OK: true, Module: "/b/libs/libphp.so"}, {Side: "head", Variant: builders.ZTS, OK: false},
		}},
		{"no Apache module", []*builders.Build{
			{Side: "base", Variant: builders.ZTS, OK: true}, {Side: "head", Variant: builders.ZTS, OK: true},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newTestRun(t, Config{})
			r.Targets = []*Target{{Name: "PHP-8.2", Builds: tt.builds}}
			err := raceStage{}.Run(context.Background(), r)
			var skip *SkipError
			if !errors.As(err, &skip) || !strings.Contains(skip.Reason, "no ZTS base and head") {
				t.Errorf("Run = %v, want a skip that says why", err)
			}
		})
	}
}

// The stage's one message tells of every target, each line naming its
// target, and an error in any target makes the stage an error (exit 2)
// rather than a failure.
func TestRaceOutcome(t *testing.T) {
	exact := race.JudgeCounters(race.CounterRun{Requests: 10, PerRequest: map[string]int64{"a": 1}, Grew: map[string]int64{"a": 10}, DBConnections: 20, ConnsPerReq: 2})
	lost := race.JudgeCounters(race.CounterRun{Requests: 10, PerRequest: map[string]int64{"a": 1}, Grew: map[string]int64{"a": 9}, DBConnections: 20, ConnsPerReq: 2})
	result := func(base, head race.CounterCheck, errs ...string) *race.Result {
		return &race.Result{Counters: []*race.Counters{{Side: side.Base, Check: base}, {Side: side.Head, Check: head}}, TSan: &race.TSan{}, Errors: errs}
	}
	for _, tt := range []struct {
		name    string
		results map[string]*race.Result
		want    string // "" for a pass
		failed  bool
	}{
		{"passed", map[string]*race.Result{"master": result(exact, exact), "PHP-8.4": result(exact, exact)}, "", false},
		{"head lost updates in two targets", map[string]*race.Result{"master": result(exact, lost), "PHP-8.4": result(exact, lost)},
			"not safe under concurrency: master: head counters: 1 counter off in 10 requests, 1 short in all (a 9 of 10); PHP-8.4: head counters: 1 counter off in 10 requests, 1 short in all (a 9 of 10)", true},
		{"an error beats a failure", map[string]*race.Result{"master": result(exact, lost), "PHP-8.4": result(exact, exact, "head counters: no server", "ThreadSanitizer: no build")},
			"PHP-8.4: head counters: no server; PHP-8.4: ThreadSanitizer: no build", false},
		{"base lost updates", map[string]*race.Result{"master": result(lost, lost)},
			"master: base counters: 1 counter off in 10 requests, 1 short in all (a 9 of 10) although base takes the statistics mutex: the check cannot judge head here", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var judged []judgedRace
			for _, name := range []string{"master", "PHP-8.4"} {
				if res, ok := tt.results[name]; ok {
					judged = append(judged, judgedRace{name, res, race.Judge(res)})
				}
			}
			err := raceOutcome(judged)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("raceOutcome = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("raceOutcome = nil, want %q", tt.want)
			}
			msg := err.Error()
			var ce *verdict.CheckError
			if errors.As(err, &ce) {
				msg = ce.Message
			}
			if msg != tt.want || errors.Is(err, verdict.ErrCheckFailed) != tt.failed {
				t.Errorf("raceOutcome = %q (check failed: %v), want %q (%v)", msg, errors.Is(err, verdict.ErrCheckFailed), tt.want, tt.failed)
			}
		})
	}
}

// The memory phase serves a quarter of what the counter phase does, and
// "not set" is the workload's default before it is quartered: the CI run
// that leaves --race-requests unset once served 1 request with memory
// statistics on.
func TestPhaseRequests(t *testing.T) {
	var c Config
	c.setDefaults()
	for _, tt := range []struct {
		configured int
		memory     bool
		want       int
	}{
		{c.RaceRequests, false, concurrency.DefaultRequests},
		{c.RaceRequests, true, concurrency.DefaultRequests / 4},
		{400, true, 100},
		{100, false, 100},
		{3, true, 1},
	} {
		if got := phaseRequests(tt.configured, tt.memory); got != tt.want {
			t.Errorf("phaseRequests(%d, memory %v) = %d, want %d", tt.configured, tt.memory, got, tt.want)
		}
	}
}
