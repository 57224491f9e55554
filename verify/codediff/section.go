package codediff

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Label names the NTS comparison in the report's tables and its verdict
// block.
func (*Result) Label() string { return "NTS" }

// Question is the reviewer's question the check answers: the first, does
// the NTS machine code stay the same.
func (*Result) Question() int { return 1 }

// Sections are the target's NTS section and, where there is one, its ZTS
// comparison's. A nil Result has its NTS section too: every target is
// asked question 1, and the section says that it was not compared.
func (r *Result) Sections() []verdict.Section {
	ss := []verdict.Section{r}
	if r != nil && r.ZTS != nil {
		ss = append(ss, r.Information())
	}
	return ss
}

// Cell is the NTS comparison in the report's verdict block. A nil Result is a
// target the check did not run on: every target is asked question 1, so
// its cell and section say that it was not compared rather than vanish.
func (r *Result) Cell() string {
	if r == nil || r.NTS == nil {
		switch {
		case r != nil && len(r.Errors) > 0:
			return verdict.Error.Icon() + " not compared"
		case r != nil && len(r.Rejected) > 0:
			return verdict.Failed.Icon() + " head's objects rejected"
		}
		return "not compared"
	}
	n := r.NTS
	if n.AllIdentical() {
		return fmt.Sprintf("%s %d/%d identical", verdict.Passed.Icon(), n.Identical, n.Compared)
	}
	mark := verdict.InformationIcon
	if r.ExpectNTSNoop {
		mark = verdict.Failed.Icon()
	}
	return fmt.Sprintf("%s %d/%d identical, %s", mark, n.Identical, n.Compared, changeCounts(n))
}

// WriteSection writes the NTS section: the verdict's rule, then the
// Report's Markdown with every changed function's disassembly diff.
func (r *Result) WriteSection(w io.Writer) error { return r.writeNTS(w, false) }

// WriteCompactSection is WriteSection without the disassembly diffs, for a
// comment that would exceed GitHub's size limit with them: the functions
// are listed by name.
func (r *Result) WriteCompactSection(w io.Writer) error { return r.writeNTS(w, true) }

func (r *Result) writeNTS(w io.Writer, compact bool) error {
	var b strings.Builder
	b.WriteString("#### NTS machine code\n\n")
	if r == nil {
		b.WriteString("Not compared: the codediff stage did not run for this target.\n\n")
		return flush(w, &b)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "> [!WARNING]\n> Not compared: %s\n\n", markdown.Text(e))
	}
	for _, e := range r.Rejected {
		fmt.Fprintf(&b, "> [!CAUTION]\n> Failed: %s\n\n", markdown.Text(e))
	}
	if r.NTS == nil {
		if len(r.Errors) == 0 && len(r.Rejected) == 0 {
			b.WriteString("Not compared: no NTS build of both base and head.\n\n")
		}
		return flush(w, &b)
	}
	if r.ExpectNTSNoop {
		b.WriteString("The verdict: with `--expect-nts-noop`, any changed, added or removed function fails the run.\n\n")
	} else {
		b.WriteString("Information only (`--expect-nts-noop=false`).\n\n")
	}
	if !compact {
		if err := flush(w, &b); err != nil {
			return err
		}
		return r.NTS.Markdown(w)
	}
	n := r.NTS
	fmt.Fprintf(&b, "**%s** (%s): %d changed, %d added, %d removed.\n\n", n.Summary(), markdown.Code(n.Objects), len(n.Changed), len(n.Added), len(n.Removed))
	writeFuncList(&b, n, 0)
	if len(n.Changed) > 0 {
		b.WriteString("The disassembly diffs would not fit in a comment: they are in summary.md and results.json.\n\n")
	}
	return flush(w, &b)
}

// Information is the ZTS comparison of a Result, shown and never judged: a
// column and a section of the report of its own, after the NTS ones.
type Information struct{ r *Result }

// Information is r's ZTS comparison; its cell says "not compared" and its
// section is empty where there is none.
func (r *Result) Information() Information { return Information{r} }

// Label names the ZTS comparison in the report's tables.
func (Information) Label() string { return "ZTS" }

// Cell is the ZTS comparison in the report's verdict block.
func (i Information) Cell() string {
	if i.r == nil || i.r.ZTS == nil {
		return "not compared"
	}
	z := i.r.ZTS
	if z.AllIdentical() {
		return fmt.Sprintf("%d/%d identical", z.Identical, z.Compared)
	}
	return fmt.Sprintf("%s (of %d)", changeCounts(z), z.Compared)
}

// maxListed caps the functions the ZTS section lists by name.
const maxListed = 100

// WriteSection writes the ZTS section: the counts, the warnings, and the
// functions that differ by name (their diffs are in results.json).
func (i Information) WriteSection(w io.Writer) error {
	if i.r == nil || i.r.ZTS == nil {
		return nil
	}
	z := i.r.ZTS
	var b strings.Builder
	b.WriteString("#### ZTS machine code\n\n")
	fmt.Fprintf(&b, "Information: the functions the change touches under ZTS. %s.\n\n", z.Summary())
	for _, warning := range z.Warnings {
		fmt.Fprintf(&b, "> warning: %s\n", markdown.Text(warning))
	}
	if len(z.Warnings) > 0 {
		b.WriteString("\n")
	}
	if n := len(z.Changed) + len(z.Added) + len(z.Removed); n > 0 {
		fmt.Fprintf(&b, "<details><summary>%s under ZTS</summary>\n\n", html.EscapeString(changeCounts(z)))
		writeFuncList(&b, z, maxListed)
		b.WriteString("</details>\n\n")
	}
	return flush(w, &b)
}

// writeFuncList lists the changed, added and removed functions of r by
// name, at most max of them (0: all), as a block of its own.
func writeFuncList(b *strings.Builder, r *Report, max int) {
	var lines []string
	for _, d := range r.Changed {
		lines = append(lines, fmt.Sprintf("- %s in %s (%d → %d bytes)", markdown.Code(d.Name), markdown.Code(d.Object), d.BaseSize, d.HeadSize))
	}
	for _, f := range r.Added {
		lines = append(lines, fmt.Sprintf("- added: %s in %s (%d bytes)", markdown.Code(f.Name), markdown.Code(f.Object), f.Size))
	}
	for _, f := range r.Removed {
		lines = append(lines, fmt.Sprintf("- removed: %s in %s (%d bytes)", markdown.Code(f.Name), markdown.Code(f.Object), f.Size))
	}
	if max > 0 && len(lines) > max {
		lines = append(lines[:max], fmt.Sprintf("- and %d more (results.json has them all)", len(lines)-max))
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if len(lines) > 0 {
		b.WriteString("\n")
	}
}

// changeCounts is "2 changed", "2 changed, 1 added", ...
func changeCounts(r *Report) string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{len(r.Changed), "changed"}, {len(r.Added), "added"}, {len(r.Removed), "removed"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return strings.Join(parts, ", ")
}

func flush(w io.Writer, b *strings.Builder) error {
	_, err := io.WriteString(w, b.String())
	return err
}

var _ verdict.Check = (*Result)(nil)

// Answer is "": the check's Cell is its line under question 1.
func (*Result) Answer() string { return "" }

// Caveats are none: what codediff finds either gates or is information.
func (*Result) Caveats() []string { return nil }

// Artifacts are none beyond the results: the diffs are in the section.
func (*Result) Artifacts() []verdict.Artifact { return nil }
