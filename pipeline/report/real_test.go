package report

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/patchproof/patchproof/internal/golden"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

// The report as a maintainer gets it: rendered from the results.json files
// of real runs, those scripts/test makes of the demo (on the host, under
// --builder docker, and of the racy head), kept gzipped in testdata/real.
// scripts/goldens copies a scripts/test run's files there and rewrites the
// goldens; the made-up results of resultstest cover what a demo cannot
// show (a failed build, a backport that does not apply).
var realRuns = []string{"demo", "demo-docker", "racy"}

// readReal reads the real run name's results.json as the report command
// does, through results.Read.
func readReal(t *testing.T, name string) *results.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "real", name+".results.json.gz"))
	if err != nil {
		t.Fatalf("%v (scripts/goldens writes it from a scripts/test run)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := results.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Each real run's summary.md is its golden, and its comment fits, opens
// with the verdict block (at most 12 lines of text above the first table)
// and leaves nothing open.
func TestRealGoldens(t *testing.T) {
	for _, name := range realRuns {
		t.Run(name, func(t *testing.T) {
			rs := []*results.Result{readReal(t, name)}
			var b bytes.Buffer
			if err := RenderSummary(&b, rs); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "real", name+".md"), b.Bytes())
			body, err := commentBody(rs, renderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if n := utf8.RuneCountInString(body); n > bodyBudget {
				t.Errorf("the comment is %d characters, over %d", n, bodyBudget)
			}
			checkBalanced(t, body)
			// What a reviewer reads before the first table: the headline,
			// the run's warnings (a real run posted to the fake's PR has
			// one), the verdict block. Blank lines cost no reading.
			above, _, _ := strings.Cut(body, "\n|")
			above, _, _ = strings.Cut(above, "\n### ")
			lines := 0
			for _, l := range strings.Split(above, "\n") {
				if strings.TrimSpace(l) != "" && strings.TrimSpace(l) != ">" {
					lines++
				}
			}
			if lines > 12 {
				t.Errorf("%d lines above the first table, want at most 12:\n%s", lines, above)
			}
			for q := 1; q <= 5; q++ {
				if !strings.Contains(above, fmt.Sprintf("\n%d. ", q)) {
					t.Errorf("the verdict block lacks question %d:\n%s", q, above)
				}
			}
		})
	}
}

// The real demo run as each job of a PR of three targets, and of five:
// the comment of their merge is within the budget and holds every
// target's verdict block and heading, and the commits table, uncut.
func TestRealCommentBudget(t *testing.T) {
	for _, names := range [][]string{resultstest.PRTargets, resultstest.FiveTargets} {
		t.Run(fmt.Sprintf("%d targets", len(names)), func(t *testing.T) {
			var rs []*results.Result
			for _, n := range names {
				rs = append(rs, resultstest.AsPRJob(readReal(t, "demo"), n))
			}
			checkBudget(t, roundTrip(t, rs...), names)
		})
	}
}
