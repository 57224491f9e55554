package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/verify/race"
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

func TestCountersText(t *testing.T) {
	exact := race.JudgeCounters(race.CounterRun{Requests: 10, PerRequest: map[string]int64{"a": 1, "b": 2}, Grew: map[string]int64{"a": 10, "b": 20}, DBConnections: 20, ConnsPerReq: 2})
	if got, want := countersText(exact), "2/2 counters exact, 0 updates lost in 10 requests"; got != want {
		t.Errorf("exact: %q, want %q", got, want)
	}
	lost := race.JudgeCounters(race.CounterRun{Requests: 10, PerRequest: map[string]int64{"a": 1, "b": 2}, Grew: map[string]int64{"a": 9, "b": 17}, DBConnections: 20, ConnsPerReq: 2})
	if got, want := countersText(lost), "2 counters off in 10 requests, 4 short in all (a 9 of 10, b 17 of 20)"; got != want {
		t.Errorf("lost: %q, want %q", got, want)
	}
}
