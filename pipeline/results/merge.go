package results

import (
	"fmt"
	"strings"
)

// MergeError says why two Results cannot be one report: they are of
// different repositories, pull requests or head commits, or both have the
// same target. A and B index the Results given.
type MergeError struct {
	A, B int
	What string // "different pull requests (#4242, #4243)"
}

func (e *MergeError) Error() string { return e.What }

// CheckMerge reports whether rs are parts of one run that can be merged
// into one report: the same repository, pull request and head commit,
// and no target twice. A CI run has one job per target; anything else
// merged would post one PR's verdict with another's evidence.
func CheckMerge(rs []*Result) error {
	targets := map[string]int{}
	for i, b := range rs {
		for j, a := range rs[:i] {
			if ra, rb := repoKey(a.Settings.Repo), repoKey(b.Settings.Repo); ra != rb {
				return &MergeError{j, i, fmt.Sprintf("different repositories (%s, %s)", a.Settings.Repo, b.Settings.Repo)}
			}
			if a.Settings.PR != b.Settings.PR {
				return &MergeError{j, i, fmt.Sprintf("different pull requests (#%d, #%d)", a.Settings.PR, b.Settings.PR)}
			}
			if ha, hb := a.ChangeHead(), b.ChangeHead(); ha != "" && hb != "" && ha != hb {
				return &MergeError{j, i, fmt.Sprintf("different head commits (%s, %s)", ha, hb)}
			}
		}
		for _, t := range b.Targets {
			if j, ok := targets[t.Name]; ok {
				return &MergeError{j, i, fmt.Sprintf("target %s twice", t.Name)}
			}
			targets[t.Name] = i
		}
	}
	return nil
}

// repoKey is a repository as results.json names it, in one spelling:
// https://github.com/php/php-src.git and .../PHP/php-src/ are one.
func repoKey(repo string) string {
	return strings.TrimSuffix(strings.TrimRight(strings.ToLower(repo), "/"), ".git")
}

// ChangeHead is the head commit of the change r validated: its own
// target's head, or for a job of backports only, the commit their change
// came from. "" when r does not say.
func (r *Result) ChangeHead() string {
	from := ""
	for _, t := range r.Targets {
		switch {
		case t.Backport == nil && t.Head.Commit != "":
			return t.Head.Commit
		case t.Backport != nil && from == "":
			from = t.Backport.FromCommit
		}
	}
	return from
}
