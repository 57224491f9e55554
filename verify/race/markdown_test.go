package race

import (
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/workloads/concurrency"
)

func section(t *testing.T, r *Result) string {
	t.Helper()
	var b strings.Builder
	if err := r.WriteSection(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A crash in the counters' server is told in the section whenever a build
// had one, and in the overview only when head's alone fails the check.
func TestCrashLine(t *testing.T) {
	segv := []string{"Segmentation fault (11)"}
	exact := counterCheck(10, 20)
	for _, c := range []struct {
		name       string
		base, head []string
		want       string
		failed     bool
	}{
		{"none", nil, nil, "", false},
		{"head alone", nil, segv, "❌ head's PHP crashed in Apache's child (Segmentation fault (11)) where base's did not", true},
		{"both", segv, segv, "⚠ PHP crashed in Apache's child: base Segmentation fault (11), head Segmentation fault (11); base's crashed too, so it is not the change's to gate", false},
		{"base alone", segv, nil, "⚠ PHP crashed in Apache's child: base Segmentation fault (11), head none; base's own", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := judged(exact, exact, RaceDiff{})
			r.Counters[0].Run.ChildSignals, r.Counters[1].Run.ChildSignals = c.base, c.head
			line, failed := r.crashLine()
			if line != c.want || failed != c.failed {
				t.Errorf("crashLine = %q, %v; want %q, %v", line, failed, c.want, c.failed)
			}
			if cell := r.Cell(); strings.Contains(cell, "crashed") != c.failed {
				t.Errorf("the overview's cell %q", cell)
			}
			if s := section(t, r); c.want != "" && !strings.Contains(s, "- "+c.want+"\n") {
				t.Errorf("the section lacks the crash:\n%s", s)
			}
		})
	}
	// A side whose counters did not run, or whose log was not read, has
	// nothing to compare.
	t.Run("no base run", func(t *testing.T) {
		r := judged(exact, exact, RaceDiff{})
		r.Counters = r.Counters[1:]
		r.Counters[0].Run.ChildSignals = segv
		if _, failed := r.crashLine(); failed {
			t.Error("head's crash failed a check that had no base run")
		}
	})
	t.Run("base's log not read", func(t *testing.T) {
		r := judged(exact, exact, RaceDiff{})
		r.Counters[0].Run.ChildSignalsRead = false
		r.Counters[1].Run.ChildSignals = segv
		want := "⚠ PHP crashed in Apache's child: base not known, head Segmentation fault (11); base's log was not read, so it is not gated"
		if line, failed := r.crashLine(); failed || line != want {
			t.Errorf("%q, %v; want %q, not failed", line, failed, want)
		}
	})
}

// What a TSan report or the server names (summaries, functions, files,
// signals) is the change's to choose: it reaches the Markdown escaped.
func TestSectionEscapesUntrusted(t *testing.T) {
	evil := "<img src=x onerror=alert(1)>"
	rep := Report{Kind: "data race", Summary: "data race in " + evil, File: "ext/mysqlnd/" + evil + ".c",
		Accesses: []Access{{What: "Write of size 8 by thread T1", Stack: []Frame{{Func: "f" + evil + "```", File: "ext/mysqlnd/a.c", Line: 1}}}}}
	r := judged(counterCheck(10, 20), counterCheck(10, 20), RaceDiff{New: []Report{rep}, NewElsewhere: []Report{rep}})
	r.Counters[1].Run.ChildSignals = []string{evil}
	r.Errors = []string{"ThreadSanitizer: " + evil}
	s := section(t, r)
	esc := "&lt;img src=x onerror=alert(1)&gt;"
	// As text it is escaped; in a code span or block, where Markdown
	// renders no HTML, it stands as itself inside a fence it cannot close.
	for _, want := range []string{
		"(first in `ext/mysqlnd/" + evil + ".c`)",
		"- ❌ head's PHP crashed in Apache's child (" + esc + ") where base's did not\n",
		"- ⚠️ ThreadSanitizer: " + esc + "\n",
		"<summary>❌ new race: data race in " + esc + "</summary>",
		"````\nWrite of size 8 by thread T1:\n    #0 f" + evil + "``` ext/mysqlnd/a.c:1\n````\n",
		"- data race in " + esc + "\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the section lacks %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "<img"); n != 2 {
		t.Errorf("the tag stands unescaped %d times, want 2 (the code span and the code block):\n%s", n, s)
	}
	if cell := r.Cell(); strings.Contains(cell, "<img") {
		t.Errorf("the cell has the untrusted tag unescaped: %s", cell)
	}
	// A crash base has too is told, not gated: escaped all the same.
	r.Counters[0].Run.ChildSignals = []string{evil}
	if line, _ := r.crashLine(); line != "⚠ PHP crashed in Apache's child: base "+esc+", head "+esc+"; base's crashed too, so it is not the change's to gate" {
		t.Errorf("crashLine = %q", line)
	}
}

// Every error is a line of the section, its first line only, and the cell
// counts them.
func TestSectionErrors(t *testing.T) {
	r := judged(counterCheck(10, 20), counterCheck(10, 20), RaceDiff{})
	r.TSan = nil
	r.Errors = []string{"base counters: apache did not start\nits log says more", "ThreadSanitizer: no TSan build of head"}
	s := section(t, r)
	for _, want := range []string{
		"- ⚠️ ThreadSanitizer not run\n",
		"- ⚠️ base counters: apache did not start\n",
		"- ⚠️ ThreadSanitizer: no TSan build of head\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the section lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "its log says more") {
		t.Errorf("the section has an error's second line:\n%s", s)
	}
	if cell := r.Cell(); !strings.HasSuffix(cell, "<br>⚠️ 2 errors") {
		t.Errorf("cell %q does not count the errors", cell)
	}
}

// A crash of both builds' PHP is a caveat of the verdict block, not a
// failure; head's alone is neither (it fails the check).
func TestCaveats(t *testing.T) {
	r := &Result{Threads: 16, Counters: []*Counters{
		{Side: side.Base, Run: &concurrency.Result{ChildSignals: []string{"Segmentation fault (11)"}, ChildSignalsRead: true}},
		{Side: side.Head, Run: &concurrency.Result{ChildSignals: []string{"Segmentation fault (11)"}, ChildSignalsRead: true}},
	}}
	got := r.Caveats()
	if len(got) != 1 || !strings.HasPrefix(got[0], "PHP crashed in Apache's child: base Segmentation fault (11), head Segmentation fault (11)") {
		t.Errorf("caveats %q", got)
	}
	r.Counters[0].Run.ChildSignals = nil
	if got := r.Caveats(); len(got) != 0 {
		t.Errorf("head's own crash is a caveat: %q", got)
	}
}

// The section says how PHP ran OPcache in the servers where the result
// records it, and nothing where an older result does not.
func TestSectionOPcache(t *testing.T) {
	r := judged(counterCheck(10, 20), counterCheck(10, 20), RaceDiff{})
	if s := section(t, r); strings.Contains(s, "OPcache") {
		t.Errorf("a result without the OPcache field speaks of it:\n%s", s)
	}
	r.OPcache = "on: opcache.enable=1, opcache.validate_timestamps=0"
	if s := section(t, r); !strings.Contains(s, "statistics on, OPcache on (opcache.enable=1, opcache.validate_timestamps=0): a fixed workload") {
		t.Errorf("the section does not state OPcache's settings:\n%s", s)
	}
}
