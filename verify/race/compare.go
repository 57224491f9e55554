package race

import (
	"slices"
	"strings"
)

// RaceDiff is head's ThreadSanitizer reports against base's.
type RaceDiff struct {
	// New are head's reports that base has not, in code the change touches
	// or in ext/mysqlnd: each fails the check.
	New []Report `json:"new,omitempty"`
	// NewElsewhere are head's reports that base has not, outside that
	// code: shown, not failing (a race elsewhere in PHP or Apache that one
	// run happened to hit).
	NewElsewhere []Report `json:"new_elsewhere,omitempty"`
	// Both are reports that base and head have alike.
	Both []Report `json:"both,omitempty"`
	// Gone are base's reports that head has not.
	Gone []Report `json:"gone,omitempty"`
}

// Clean reports whether head has no new race in the code under review.
func (d RaceDiff) Clean() bool { return len(d.New) == 0 }

// Scope says which files a new race must be in to fail the check.
type Scope struct {
	// Touched are the files the change touches, relative to the tree.
	Touched []string
	// Dirs are directories whose files always count ("ext/mysqlnd/").
	Dirs []string
}

// DefaultDirs are the directories of the code under review.
var DefaultDirs = []string{"ext/mysqlnd/"}

// In reports whether file is in the scope. A change to a header counts for
// the header: a race attributed to the .c file that expands its macro is
// caught by Dirs, or by a frame in the header itself.
func (s Scope) In(file string) bool {
	if file == "" {
		return false
	}
	if slices.Contains(s.Touched, file) {
		return true
	}
	for _, d := range s.Dirs {
		if strings.HasPrefix(file, d) {
			return true
		}
	}
	return false
}

// inScope reports whether any access of r has a frame in scope among its
// top frames.
func (s Scope) inScope(r Report) bool {
	if s.In(r.File) {
		return true
	}
	for _, a := range r.Accesses {
		for i, f := range a.Stack {
			if i == signatureFrames {
				break
			}
			if s.In(f.File) {
				return true
			}
		}
	}
	return false
}

// CompareRaces sorts head's and base's reports into new, both and gone, by
// signature.
func CompareRaces(base, head []Report, scope Scope) RaceDiff {
	var d RaceDiff
	inBase := map[string]bool{}
	for _, r := range base {
		inBase[r.Signature()] = true
	}
	inHead := map[string]bool{}
	for _, r := range head {
		sig := r.Signature()
		inHead[sig] = true
		switch {
		case inBase[sig]:
			d.Both = append(d.Both, r)
		case scope.inScope(r):
			d.New = append(d.New, r)
		default:
			d.NewElsewhere = append(d.NewElsewhere, r)
		}
	}
	for _, r := range base {
		if !inHead[r.Signature()] {
			d.Gone = append(d.Gone, r)
		}
	}
	return d
}
