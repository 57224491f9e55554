package modules

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/verify/verdict"
)

func TestCompareAndJudge(t *testing.T) {
	base := []string{"Core", "mysqli", "mysqlnd", "PDO", "pdo_mysql"}
	for _, tt := range []struct {
		name     string
		head     []string
		want     Variant
		fails    bool
		sections int
	}{
		{"the same", base, Variant{Variant: "nts", Same: 5}, false, 0},
		{"one lost", []string{"Core", "mysqli", "PDO", "pdo_mysql"}, Variant{Variant: "nts", Same: 4, Missing: []string{"mysqlnd"}}, true, 1},
		{"one added", append([]string{"opcache"}, base...), Variant{Variant: "nts", Same: 5, Added: []string{"opcache"}}, false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := Compare("nts", base, tt.head)
			if d := cmp.Diff(tt.want, v); d != "" {
				t.Errorf("Compare (-want +got):\n%s", d)
			}
			r := &Result{Variants: []Variant{v}}
			err := Judge([]Target{{Name: "PHP-8.4", Result: r}})
			if got := errors.Is(err, verdict.ErrCheckFailed); got != tt.fails {
				t.Errorf("Judge = %v, want failed %v", err, tt.fails)
			}
			if tt.fails && !strings.Contains(err.Error(), "PHP-8.4 nts: head's php lacks mysqlnd") {
				t.Errorf("Judge = %v, want the target, variant and module named", err)
			}
			if n := len(r.Sections()); n != tt.sections {
				t.Errorf("%d sections, want %d", n, tt.sections)
			}
			if n := len(r.Moves()); n != tt.sections {
				t.Errorf("%d moves, want %d", n, tt.sections)
			}
		})
	}
}

// A module's name is the head build's text: it reaches the report as code.
func TestSectionEscapesNames(t *testing.T) {
	r := &Result{Variants: []Variant{Compare("zts", []string{"Core"}, []string{"Core", "x`@php/security-team"})}}
	var b bytes.Buffer
	if err := r.WriteSection(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), " @php") || !strings.Contains(b.String(), "head adds") {
		t.Errorf("section:\n%s", b.String())
	}
}
