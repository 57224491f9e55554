package codediff

import (
	"fmt"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/verify/verdict/verdicttest"
)

// report is a comparison of 10 functions with those named changed.
func report(changed ...string) *Report {
	r := &Report{Objects: "ext/mysqlnd/*.o", Compared: 10, Identical: 10 - len(changed)}
	for _, name := range changed {
		r.Changed = append(r.Changed, FuncDiff{Object: "ext/mysqlnd/mysqlnd_statistics.o", Name: name, BaseSize: 8, HeadSize: 4})
	}
	return r
}

func TestJudge(t *testing.T) {
	same := &Result{NTS: report(), ZTS: report("zts_only"), ExpectNTSNoop: true}
	changed := &Result{NTS: report("mysqlnd_stats_init"), ExpectNTSNoop: true}
	var eleven []string
	for i := range 11 {
		eleven = append(eleven, fmt.Sprintf("f%d", i))
	}
	for _, tt := range []struct {
		name    string
		targets []Target
		want    string // "" for nil
		failed  bool   // a *verdict.CheckError rather than a plain error
	}{
		{"identical, ZTS changed (information)", []Target{{"master", same}}, "", false},
		{"not run on a target", []Target{{"master", same}, {"PHP-8.4", nil}}, "", false},
		{"a change is information without --expect-nts-noop", []Target{{"master", &Result{NTS: report("mysqlnd_stats_init")}}}, "", false},
		{"a change fails a no-op", []Target{{"master", same}, {"PHP-8.4", changed}},
			"PHP-8.4: NTS machine code changed: ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init", true},
		{"added and removed functions fail a no-op too", []Target{{"master", &Result{ExpectNTSNoop: true, NTS: &Report{
			Compared: 3, Identical: 3, Added: []Func{{Object: "a.o", Name: "new"}}, Removed: []Func{{Object: "b.o", Name: "old"}},
		}}}}, "master: NTS machine code changed: +a.o:new, -b.o:old", true},
		{"every target is named", []Target{{"master", changed}, {"PHP-8.4", changed}},
			"master: NTS machine code changed: ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init; PHP-8.4: NTS machine code changed: ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init", true},
		{"ten functions are named, then counted", []Target{{"master", &Result{NTS: report(eleven...), ExpectNTSNoop: true}}},
			"master: NTS machine code changed: " + names(eleven[:10]) + ", and 1 more", true},
		{"a target not compared cannot be judged", []Target{{"master", same}, {"PHP-8.4", &Result{Errors: []string{"nts: no object files"}}}},
			"PHP-8.4: nts: no object files", false},
		{"an error wins over a failure", []Target{{"master", changed}, {"PHP-8.4", &Result{Errors: []string{"zts: boom", "nts: bang"}}}},
			"PHP-8.4: zts: boom; PHP-8.4: nts: bang", false},
		{"head's objects rejected fail, no-op expected or not", []Target{{"master", same}, {"PHP-8.4", &Result{Rejected: []string{"nts: head's objects rejected: section .text"}}}},
			"PHP-8.4: nts: head's objects rejected: section .text", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Judge(tt.targets)
			verdicttest.Judged(t, err, tt.want, tt.failed)
		})
	}
}

func names(fs []string) string {
	var out []string
	for _, f := range fs {
		out = append(out, "ext/mysqlnd/mysqlnd_statistics.o:"+f)
	}
	return strings.Join(out, ", ")
}

func TestCells(t *testing.T) {
	for _, tt := range []struct {
		name     string
		r        *Result
		nts, zts string
	}{
		{"not run", nil, "not compared", "not compared"},
		{"no builds", &Result{}, "not compared", "not compared"},
		{"not comparable", &Result{Errors: []string{"nts: boom"}}, "⚠️ not compared", "not compared"},
		{"head's objects rejected", &Result{Rejected: []string{"nts: head's objects rejected"}}, "❌ head's objects rejected", "not compared"},
		{"identical", &Result{NTS: report(), ZTS: report(), ExpectNTSNoop: true}, "✅ 10/10 identical", "10/10 identical"},
		{"changed, a no-op expected", &Result{NTS: report("f"), ZTS: report("f", "g"), ExpectNTSNoop: true}, "❌ 9/10 identical, 1 changed", "2 changed (of 10)"},
		{"changed, information", &Result{NTS: report("f")}, "ℹ️ 9/10 identical, 1 changed", "not compared"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Cell(); got != tt.nts {
				t.Errorf("Cell = %q, want %q", got, tt.nts)
			}
			if got := tt.r.Information().Cell(); got != tt.zts {
				t.Errorf("Information().Cell = %q, want %q", got, tt.zts)
			}
		})
	}
}

// The compact section names the changed functions and leaves their diffs
// out; the full one has them.
func TestCompactSection(t *testing.T) {
	r := &Result{NTS: report("mysqlnd_stats_init"), ExpectNTSNoop: true}
	r.NTS.Changed[0].Diff = "-lock\n+xadd\n"
	var full, compact strings.Builder
	if err := r.WriteSection(&full); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteCompactSection(&compact); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(full.String(), "+xadd") {
		t.Errorf("the section lacks the diff:\n%s", full.String())
	}
	if c := compact.String(); strings.Contains(c, "+xadd") || !strings.Contains(c, "- `mysqlnd_stats_init` in `ext/mysqlnd/mysqlnd_statistics.o` (8 → 4 bytes)\n") {
		t.Errorf("the compact section has the diff or lacks the function:\n%s", c)
	}
}
