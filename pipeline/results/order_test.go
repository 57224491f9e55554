package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSortedTargets(t *testing.T) {
	names := []string{"PHP-8.4", "feature", "PHP-8.10", "master", "PHP-8.5", "PHP-7.4"}
	var rs []*Result
	for _, n := range names {
		rs = append(rs, &Result{Targets: []*TargetResult{{Name: n}}})
	}
	var got []string
	for _, t := range SortedTargets(rs) {
		got = append(got, t.Name)
	}
	want := []string{"master", "PHP-8.10", "PHP-8.5", "PHP-8.4", "PHP-7.4", "feature"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	if got := JobName(&Result{Targets: []*TargetResult{{Name: "PHP-8.4"}, {Name: "PHP-8.5"}}}); got != "PHP-8.5+PHP-8.4" {
		t.Errorf("JobName = %q", got)
	}
}
