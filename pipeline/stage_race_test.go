package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/workloads/concurrency"
	"github.com/patchproof/patchproof/workloads/httpd/httpdtest"
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

// The race check's servers run OPcache where both builds have it (httpd
// loads it), and the result says which.
func TestOPcacheState(t *testing.T) {
	with, without := httpdtest.Build(t, true), httpdtest.Build(t, false)
	if got := opcacheState(with, with); !strings.HasPrefix(got, "on: ") || !strings.Contains(got, "opcache.validate_timestamps=0") {
		t.Errorf("both builds with OPcache: %q", got)
	}
	for _, tc := range []struct{ base, head, want string }{
		{with, without, "on for base only: head's build has none; in the counters' servers"},
		{without, with, "on for head only: base's build has none; in the counters' servers"},
		{without, without, "off: "},
	} {
		got := opcacheState(tc.base, tc.head)
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("opcacheState = %q, want %q…", got, tc.want)
		}
		if tc.base == without && tc.head == without && strings.Contains(got, "counters' servers") {
			t.Errorf("opcacheState = %q: off, yet it says where OPcache ran", got)
		}
	}
}
