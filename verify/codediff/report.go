package codediff

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
)

// Report is the outcome of a comparison. Its JSON field names are part of
// results.json: add fields, never rename them. Lists are sorted by object
// and name, and are empty rather than null.
type Report struct {
	Objects     string `json:"objects"`      // the selection pattern, relative to each side
	BaseDir     string `json:"base_dir"`     // as given
	HeadDir     string `json:"head_dir"`     // as given
	BaseObjects int    `json:"base_objects"` // object files read on the base side
	HeadObjects int    `json:"head_objects"` // and on the head side

	Compared  int        `json:"compared"`  // functions present on both sides
	Identical int        `json:"identical"` // of those, the same machine code
	Changed   []FuncDiff `json:"changed"`   // the rest, with their disassembly diff
	Added     []Func     `json:"added"`     // only in head
	Removed   []Func     `json:"removed"`   // only in base

	// Warnings are things a reader should weigh with the counts: a
	// fallback selection, a function without a size.
	Warnings []string `json:"warnings"`
}

// Func is a function present on one side only.
type Func struct {
	Object string `json:"object"` // slash-separated, relative to the side's directory
	Name   string `json:"name"`
	Size   int    `json:"size"` // bytes
}

// FuncDiff is a function whose machine code differs.
type FuncDiff struct {
	Object   string `json:"object"`
	Name     string `json:"name"`
	BaseSize int    `json:"base_size"`
	HeadSize int    `json:"head_size"`
	Diff     string `json:"diff"` // unified diff of the two disassemblies
}

// AllIdentical reports whether both sides have the same functions and each
// is the same machine code.
func (r *Report) AllIdentical() bool {
	return len(r.Changed) == 0 && len(r.Added) == 0 && len(r.Removed) == 0
}

// Summary is the counts line, e.g. "484/484 functions identical".
func (r *Report) Summary() string {
	return fmt.Sprintf("%d/%d functions identical", r.Identical, r.Compared)
}

// maxDiffLines caps each function's diff in Markdown, which ends up in a
// pull request comment; the JSON report keeps it whole.
const maxDiffLines = 400

// Markdown renders the report for a pull request comment or a step summary.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	objects := fmt.Sprintf("%d object files", r.BaseObjects)
	if r.BaseObjects != r.HeadObjects {
		objects = fmt.Sprintf("%d/%d object files", r.BaseObjects, r.HeadObjects)
	}
	fmt.Fprintf(&b, "**%s** in %s (%s): %d changed, %d added, %d removed.\n",
		r.Summary(), objects, markdown.Code(r.Objects), len(r.Changed), len(r.Added), len(r.Removed))
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "\n> warning: %s", markdown.Text(w))
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n")
	}
	if len(r.Changed) > 0 {
		b.WriteString("\n#### Changed functions\n")
	}
	for _, d := range r.Changed {
		fmt.Fprintf(&b, "\n<details><summary><code>%s</code> in <code>%s</code> (%d → %d bytes)</summary>\n\n",
			markdown.HTML(d.Name), markdown.HTML(d.Object), d.BaseSize, d.HeadSize)
		diff, cut := capLines(d.Diff, maxDiffLines)
		// A string literal in a target may hold a backtick fence.
		b.WriteString(markdown.CodeBlock("diff", diff))
		if cut > 0 {
			fmt.Fprintf(&b, "\n%d more lines in results.json.\n", cut)
		}
		b.WriteString("\n</details>\n")
	}
	writeFuncs(&b, "Added functions", r.Added)
	writeFuncs(&b, "Removed functions", r.Removed)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFuncs(b *strings.Builder, title string, fs []Func) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n#### %s\n\n", title)
	for _, f := range fs {
		fmt.Fprintf(b, "- %s in %s (%d bytes)\n", markdown.Code(f.Name), markdown.Code(f.Object), f.Size)
	}
}

// capLines returns the first n lines of s and how many were cut.
func capLines(s string, n int) (string, int) {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= n {
		return s, 0
	}
	return strings.Join(lines[:n], ""), len(lines) - n
}
