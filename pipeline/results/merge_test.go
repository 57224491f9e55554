package results_test

import (
	"errors"
	"testing"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

func TestCheckMerge(t *testing.T) {
	otherPR := resultstest.Backport()
	otherPR.Settings.PR = 4243
	otherRepo := resultstest.Backport()
	otherRepo.Settings.Repo = "https://github.com/alice/php-src"
	sameRepo := resultstest.Backport()
	sameRepo.Settings.Repo = "https://github.com/PHP/php-src.git/"
	otherHead := resultstest.Backport()
	for _, tg := range otherHead.Targets {
		tg.Backport.FromCommit = "ffffffffffffffffffffffffffffffffffffffff"
	}
	for _, tt := range []struct {
		name string
		rs   []*results.Result
		want string // "" for mergeable
	}{
		{"one job per target", []*results.Result{resultstest.Failing(), resultstest.Backport()}, ""},
		{"one repository, spelt two ways", []*results.Result{resultstest.Failing(), sameRepo}, ""},
		{"different pull requests", []*results.Result{resultstest.Failing(), otherPR}, "different pull requests (#4242, #4243)"},
		{"different repositories", []*results.Result{resultstest.Failing(), otherRepo}, "different repositories (https://github.com/php/php-src, https://github.com/alice/php-src)"},
		{"different head commits", []*results.Result{resultstest.Failing(), otherHead}, "different head commits (" + resultstest.PRHead + ", ffffffffffffffffffffffffffffffffffffffff)"},
		{"a target twice", []*results.Result{resultstest.Failing(), resultstest.PassingPR()}, "target master twice"},
		{"the same file twice", []*results.Result{resultstest.Backport(), resultstest.Backport()}, "target PHP-8.4 twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := results.CheckMerge(tt.rs)
			var me *results.MergeError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckMerge: %v, want none", err)
			case tt.want != "" && (!errors.As(err, &me) || me.What != tt.want || me.A != 0 || me.B != 1):
				t.Errorf("CheckMerge: %#v, want results 0 and 1: %s", err, tt.want)
			}
		})
	}
}
