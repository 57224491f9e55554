// Package modules is the modules check's one home: does head's PHP load
// the extensions base's does? Each build's `php -m` (recorded by the build)
// is compared, variant by variant; an extension base has and head lacks
// fails the target (a change that drops mysqlnd, or a build whose
// configure lost an extension, is no change to review), one head adds is
// information. It owns the check's part of results.json (Result), Judge,
// and its part of the report, through the verdict.Check shape.
package modules

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Result is the check's part of a target's results: one comparison a
// variant built on both sides.
type Result struct {
	Variants []Variant `json:"variants"`
}

// Variant is base's and head's modules of one variant.
type Variant struct {
	Variant string `json:"variant"`
	// Missing are base's modules head's php -m does not list.
	Missing []string `json:"missing,omitempty"`
	// Added are head's modules base's php -m does not list.
	Added []string `json:"added,omitempty"`
	// Same is how many modules both list.
	Same int `json:"same"`
}

// Compare is variant's comparison of base's and head's php -m.
func Compare(variant string, base, head []string) Variant {
	v := Variant{Variant: variant}
	for _, m := range base {
		if slices.Contains(head, m) {
			v.Same++
		} else {
			v.Missing = append(v.Missing, m)
		}
	}
	for _, m := range head {
		if !slices.Contains(base, m) {
			v.Added = append(v.Added, m)
		}
	}
	slices.Sort(v.Missing)
	slices.Sort(v.Added)
	return v
}

// Target is one target's Result, named as the run names the target.
type Target struct {
	Name   string
	Result *Result
}

// Judge fails every target whose head lacks a module its base has; a nil
// Result is a target the check did not run on.
func Judge(targets []Target) error {
	var failures []string
	for _, t := range targets {
		if t.Result == nil {
			continue
		}
		for _, v := range t.Result.Variants {
			if len(v.Missing) > 0 {
				failures = append(failures, fmt.Sprintf("%s %s: head's php lacks %s", t.Name, v.Variant, strings.Join(v.Missing, ", ")))
			}
		}
	}
	return verdict.Judged(nil, failures, "")
}

var _ verdict.Check = (*Result)(nil)

// Label is the check's name in the report's tables.
func (*Result) Label() string { return "modules" }

// Question is none of the reviewer's five: the check shows only where
// head's modules differ from base's.
func (*Result) Question() int { return 0 }

// changed reports whether any variant's modules differ.
func (r *Result) changed() bool {
	return r != nil && slices.ContainsFunc(r.Variants, func(v Variant) bool { return len(v.Missing)+len(v.Added) > 0 })
}

// Sections are the check's section where head's modules differ from
// base's; none where they are the same, or the check did not run.
func (r *Result) Sections() []verdict.Section {
	if !r.changed() {
		return nil
	}
	return []verdict.Section{r}
}

// Cell is the check's line: each variant's modules, the same or not.
func (r *Result) Cell() string {
	if r == nil {
		return verdict.Skipped.Icon() + " not compared"
	}
	var lines []string
	for _, v := range r.Variants {
		switch {
		case len(v.Missing) > 0:
			lines = append(lines, fmt.Sprintf("%s %s: head lacks %s", verdict.Failed.Icon(), markdown.Text(v.Variant), codes(v.Missing)))
		case len(v.Added) > 0:
			lines = append(lines, fmt.Sprintf("%s %s: head adds %s", verdict.InformationIcon, markdown.Text(v.Variant), codes(v.Added)))
		default:
			lines = append(lines, fmt.Sprintf("%s %s: the same %d modules", verdict.Passed.Icon(), markdown.Text(v.Variant), v.Same))
		}
	}
	return strings.Join(lines, "<br>")
}

// Answer is "": the Cell says it.
func (*Result) Answer() string { return "" }

// Caveats are none: a lost module gates, an added one is in the cell.
func (*Result) Caveats() []string { return nil }

// Moves are the modules head lost or gained, a row a variant and kind.
func (r *Result) Moves() []verdict.Move {
	if r == nil {
		return nil
	}
	var ms []verdict.Move
	for _, v := range r.Variants {
		if len(v.Missing) > 0 {
			ms = append(ms, verdict.Move{What: markdown.Text(v.Variant) + " modules", How: "head lacks " + codes(v.Missing)})
		}
		if len(v.Added) > 0 {
			ms = append(ms, verdict.Move{What: markdown.Text(v.Variant) + " modules", How: "head adds " + codes(v.Added)})
		}
	}
	return verdict.Capped(ms)
}

// Artifacts are none: the modules are in results.json.
func (*Result) Artifacts() []verdict.Artifact { return nil }

// WriteSection writes the check's section: its cell, a line a variant.
func (r *Result) WriteSection(w io.Writer) error {
	_, err := fmt.Fprintf(w, "#### PHP modules\n\n%s\n\n", strings.ReplaceAll(r.Cell(), "<br>", "\n\n"))
	return err
}

// codes is names, each as code: they come from the head's build.
func codes(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = markdown.Code(n)
	}
	return strings.Join(out, ", ")
}
