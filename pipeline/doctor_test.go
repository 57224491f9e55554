package pipeline

import (
	"slices"
	"testing"

	"github.com/patchproof/patchproof/builders"
)

// doctor lists what the stages declare, stage by stage in the list's
// order, and under --builder docker only what runs on this host.
func TestRequirementsFromStages(t *testing.T) {
	for _, tt := range []struct {
		builder builders.ExecutorKind
		want    []string // tools among the rows
		notWant []string // tools a container has instead
	}{
		{builders.KindHost, []string{"gcc", "make", "apxs2", "mariadbd", "apache2", "valgrind", "wrk", "addr2line"}, []string{"dockerd"}},
		{builders.KindDocker, []string{"dockerd", "debootstrap", "wrk", "addr2line"}, []string{"make", "apxs2", "mariadbd", "apache2", "valgrind"}},
	} {
		t.Run(string(tt.builder), func(t *testing.T) {
			reqs := Requirements(tt.builder)
			cfg := &Config{Builder: tt.builder}
			cfg.setDefaults()
			var want []Requirement
			for _, s := range Stages() {
				for _, n := range s.Needs(cfg) {
					want = append(want, Requirement{Stage: s.String(), Tool: n.Tool, Package: n.Package, Why: n.Why, Optional: n.Optional})
				}
			}
			if len(reqs) != len(want) {
				t.Fatalf("%d rows, want %d, one per need the stages declare", len(reqs), len(want))
			}
			last := 0
			for i, r := range reqs {
				r.Found = ""
				if r != want[i] {
					t.Errorf("row %d = %+v, want %+v", i, r, want[i])
				}
				at := slices.Index(StageNames(), r.Stage)
				if at < last {
					t.Errorf("row %d: stage %s after a later stage's rows", i, r.Stage)
				}
				last = at
			}
			tools := map[string]bool{}
			for _, r := range reqs {
				tools[r.Tool] = true
			}
			for _, tool := range tt.want {
				if !tools[tool] {
					t.Errorf("no row for %s", tool)
				}
			}
			for _, tool := range tt.notWant {
				if tools[tool] {
					t.Errorf("a row for %s, which a container has", tool)
				}
			}
		})
	}
}
