package abi

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Label names the check in the report's tables and its verdict block.
func (*Result) Label() string { return "ABI" }

// Question is the reviewer's question the check answers with the
// backports: the fifth, does the change keep its branches, their ABI
// included.
func (*Result) Question() int { return 5 }

// Sections are the target's ABI section, none where the check did not
// run.
func (r *Result) Sections() []verdict.Section { return verdict.OneSection(r) }

// Answer is the check's part of question 5's line: its cell on one line.
func (r *Result) Answer() string { return strings.ReplaceAll(r.Cell(), "<br>", ", ") }

// Cell is the check in the verdict block: one line a variant, "ABI unchanged"
// or how many changes and breaks, marked by what they do to the target.
func (r *Result) Cell() string {
	if r == nil {
		return verdict.Skipped.Icon() + " not compared"
	}
	var lines []string
	for _, v := range r.Variants {
		lines = append(lines, r.variantLine(v))
	}
	for _, n := range r.NotCompared {
		lines = append(lines, fmt.Sprintf("%s %s: not compared", verdict.NotAvailable.Icon(), markdown.Text(n.Variant)))
	}
	if len(r.Errors) > 0 {
		lines = append(lines, verdict.Error.Icon()+" "+plural(len(r.Errors), "error", "errors"))
	}
	if len(r.Rejected) > 0 {
		lines = append(lines, verdict.Failed.Icon()+" head's build rejected")
	}
	if len(lines) == 0 {
		return "not compared"
	}
	return strings.Join(lines, "<br>")
}

func (r *Result) variantLine(v *Variant) string {
	breaks := 0
	for _, c := range v.Changes {
		if c.Break {
			breaks++
		}
	}
	switch {
	case len(v.Changes) == 0:
		return fmt.Sprintf("%s %s: ABI unchanged", verdict.Passed.Icon(), v.Name)
	case breaks == 0:
		return fmt.Sprintf("%s %s: %s, none breaking", verdict.Passed.Icon(), v.Name, plural(len(v.Changes), "ABI change", "ABI changes"))
	}
	s := fmt.Sprintf("%s %s: %s", r.breakIcon(), v.Name, plural(breaks, "ABI break", "ABI breaks"))
	if r.Policy == policyInformation {
		s += " (information: not a stable branch)"
	}
	return s
}

// breakIcon marks a break by what the policy makes of it: it fails the
// target, warns, or is information.
func (r *Result) breakIcon() string {
	switch r.Policy {
	case string(Fail):
		return verdict.Failed.Icon()
	case string(Warn):
		return verdict.WarningIcon
	}
	return verdict.InformationIcon
}

// WriteSection writes the target's "ABI" section: a line a variant, and
// the changes of each with their header and line.
func (r *Result) WriteSection(w io.Writer) error {
	var b strings.Builder
	f := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	f("#### ABI\n\n")
	f("Head against base: the layout of every struct, union, enum and typedef of the installed headers (from DWARF), the exported symbols of the php binary and libphp.so, and the API numbers.")
	switch r.Policy {
	case string(Fail):
		f(" A break fails this stable branch.")
	case string(Warn):
		f(" A break on this stable branch is a warning (`--abi warn`).")
	case policyInformation:
		f(" Not a stable branch: the changes are information.")
	case string(Off):
		f(" Not judged (`--abi off`).")
	}
	f("\n\n")
	for _, e := range r.Errors {
		f("- %s %s\n", verdict.Error.Icon(), markdown.Text(e))
	}
	for _, e := range r.Rejected {
		f("- %s %s\n", verdict.Failed.Icon(), markdown.Text(e))
	}
	for _, v := range r.Variants {
		nums := make([]string, 0, len(v.APINumbers))
		for _, n := range v.APINumbers {
			// The number is the head's header's: any word of its #define.
			nums = append(nums, n.Name+" "+markdown.Text(n.Head))
		}
		about := []string{fmt.Sprintf("%d types of %d installed headers, %d exported symbols", v.Types, v.Headers, v.Symbols)}
		if len(nums) > 0 {
			about = append(about, strings.Join(nums, ", "))
		}
		if v.Layouts != "" {
			from := "layouts from " + markdown.Text(v.Layouts)
			if v.ProbeMS > 0 {
				from += fmt.Sprintf(", %.1f s", float64(v.ProbeMS)/1000)
			}
			about = append(about, from)
		}
		if len(v.LeftOut) > 0 {
			about = append(about, plural(len(v.LeftOut), "header", "headers")+" left out")
		}
		f("- %s (%s)\n", r.variantLine(v), strings.Join(about, "; "))
	}
	f("\n")
	for _, v := range r.Variants {
		writeNotes(&b, v)
	}
	for _, v := range r.Variants {
		if len(v.Changes) == 0 {
			continue
		}
		f("| %s | change | where | base | head |\n|---|---|---|---|---|\n", v.Name)
		for _, c := range v.Changes {
			// A break is a regression of the ABI, whatever the policy
			// makes of it; another change keeps it compatible.
			mark := verdict.NoChange.Icon()
			if c.Break {
				mark = verdict.Regressed.Icon()
			}
			subj := c.Subject
			if c.Member != "" {
				subj += "." + c.Member
			}
			where := ""
			if c.File != "" {
				where = markdown.Code(fmt.Sprintf("%s:%d", c.File, c.Line))
			}
			f("| %s %s | %s | %s | %s | %s |\n", mark, markdown.Code(subj), c.Kind, where, markdown.Text(c.Base), markdown.Text(c.Head))
		}
		f("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNotes writes what a reader weighs with v's changes: the headers
// the probe left out, and the warnings.
func writeNotes(b *strings.Builder, v *Variant) {
	if len(v.LeftOut) > 0 {
		// A header that does not compile after the others (another
		// platform's, a library's the build lacks, a fragment): its
		// types are compared on neither side.
		fmt.Fprintf(b, "<details><summary>%s: %s the probe left out, whose types are not compared</summary>\n\n", markdown.Text(v.Name), plural(len(v.LeftOut), "installed header", "installed headers"))
		for _, l := range v.LeftOut {
			fmt.Fprintf(b, "- %s: %s\n", markdown.Code(l.Header), markdown.Text(l.Why))
		}
		b.WriteString("\n</details>\n\n")
	}
	for _, w := range v.Warnings {
		fmt.Fprintf(b, "> warning: %s: %s\n", markdown.Text(v.Name), markdown.Text(w))
	}
	if len(v.Warnings) > 0 {
		b.WriteString("\n")
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

var _ verdict.Check = (*Result)(nil)

// Caveats are none: an ABI change is gated by --abi or said in the cell.
func (*Result) Caveats() []string { return nil }

// Artifacts are none beyond the results: the changes are in the section.
func (*Result) Artifacts() []verdict.Artifact { return nil }
