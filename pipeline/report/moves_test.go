package report

import (
	"strings"
	"testing"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
	"github.com/patchproof/patchproof/verify/abi"
	"github.com/patchproof/patchproof/verify/suites"
)

// The "What moved" table lists what each check found different, and
// only that: the benchmark's decided changes, a changed NTS function, a
// regressed test, head's counters off and a new race; a harmless head's
// NTS, tests and counters give no row.
func TestWhatMoved(t *testing.T) {
	regressed := resultstest.Demo()
	c := &regressed.Targets[0].Tests.Comparisons[0].Comparison
	c.Regressions = append(c.Regressions, suites.Change{Test: "ext/mysqli/tests/mysqli_get_client_stats.phpt", Kind: suites.Regression, Base: suites.Pass, Head: suites.Fail})
	broke := resultstest.Demo()
	broke.Targets[0].ABI = &abi.Result{Branch: "PHP-8.2", Policy: "fail", Variants: []*abi.Variant{{Name: "zts", Changes: []abi.Change{
		{Kind: abi.MemberRemoved, Subject: "struct st_mysqlnd_stats", Member: "LOCK_access", Base: "pthread_mutex_t * at offset 16", Break: true},
		{Kind: abi.LayoutCompatible, Subject: "struct st_mysqlnd_stats", Member: "values", Base: "uint64_t *, 8 bytes", Head: "atomic_uint_least64_t *, 8 bytes"},
	}}}}
	for _, tt := range []struct {
		name    string
		res     *results.Result
		want    []string
		notWant []string
	}{
		{"demo", resultstest.DemoRun(), []string{
			"| contention | statistics mutex calls/req, statistics on | ✅ -381 improved",
			"| contention | instructions/req, cost of statistics | ✅ +13.9% → +1.7% improved",
			"| ZTS | machine code (information only) | 8 changed of 484 functions |",
		}, []string{"| NTS |", "| tests |", "| concurrency |"}},
		{"failing", resultstest.Failing(), []string{
			"| NTS | `mysqlnd_stats_init` in `ext/mysqlnd/mysqlnd_statistics.o` | ❌ machine code changed (136 → 140 bytes) |",
		}, nil},
		{"regressed test", regressed, []string{
			"| tests | `ext/mysqli/tests/mysqli_get_client_stats.phpt` (nts) | pass → fail, ❌ regressed |",
		}, nil},
		{"abi break", broke, []string{
			"| ABI | `struct st_mysqlnd_stats` member `LOCK_access` (zts) | ❌ member removed: pthread_mutex_t * at offset 16 → none |",
			"| ABI | 1 change (zts) | break nothing (layout-compatible, added) |",
		}, nil},
		{"racy", resultstest.Racy(), []string{
			"| concurrency | head's counters | ❌ 3 of 4 off in 20000 concurrent requests",
			"| concurrency | ThreadSanitizer: data race ext/mysqlnd/mysqlnd_wireprotocol.c:1739 in php_mysqlnd_rowp_read | ❌ new in head |",
		}, []string{"| contention |"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := RenderSummary(&b, []*results.Result{tt.res}); err != nil {
				t.Fatal(err)
			}
			_, table, ok := strings.Cut(b.String(), "| check | what moved | by how much |\n|---|---|---|\n")
			if !ok {
				t.Fatalf("no What moved table:\n%s", b.String())
			}
			table, _, _ = strings.Cut(table, "\n\n")
			for _, w := range tt.want {
				if !strings.Contains(table, w) {
					t.Errorf("the table lacks %q:\n%s", w, table)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(table, w) {
					t.Errorf("the table has %q:\n%s", w, table)
				}
			}
		})
	}
}
