package abi

import (
	"testing"

	"github.com/patchproof/patchproof/verify/verdict/verdicttest"
)

// Judge takes every target at once: a stable branch's break fails it, the
// same break on master is information, and a target that could not be
// compared makes the check an error, whatever the others found. Each line
// names its target.
func TestJudgeTargets(t *testing.T) {
	broken := func() *Result {
		return &Result{Variants: []*Variant{{Name: "ZTS", Changes: []Change{{Kind: MemberAdded, Subject: "struct st", Member: "c", Break: true}}}}}
	}
	errored := &Result{Errors: []string{"no debug info"}}
	rejected := func() *Result { return &Result{Rejected: []string{"head's build rejected: a cycle"}} }
	for _, tt := range []struct {
		name    string
		targets []Target
		mode    Mode
		want    string // "" for a pass
		failed  bool
	}{
		{"a break on master", []Target{{"master", broken()}}, Fail, "", false},
		{"a break on a stable branch", []Target{{"master", broken()}, {"PHP-8.4", broken()}}, Fail,
			"PHP-8.4: the ABI of a stable branch changed: ZTS struct st.c: member added", true},
		{"warn", []Target{{"PHP-8.4", broken()}}, Warn, "", false},
		{"not run on a target", []Target{{"PHP-8.4", nil}}, Fail, "", false},
		{"an error beats a failure", []Target{{"PHP-8.4", broken()}, {"PHP-8.3", errored}}, Fail, "PHP-8.3: no debug info", false},
		{"head's build rejected on master", []Target{{"master", rejected()}}, Fail, "master: head's build rejected: a cycle", true},
		{"head's build rejected under warn", []Target{{"PHP-8.4", rejected()}}, Warn, "PHP-8.4: head's build rejected: a cycle", true},
		{"head's build rejected under off", []Target{{"PHP-8.4", rejected()}}, Off, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Judge(tt.targets, tt.mode)
			verdicttest.Judged(t, err, tt.want, tt.failed)
		})
	}
}
