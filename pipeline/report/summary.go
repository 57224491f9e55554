package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
)

// RenderSummary writes the Markdown summary of results: the verdict, a
// block of answers per target, then per target the machine-code comparison, the
// builds and the other checks, the stages with a chart of where the time
// went, and the commits, settings and machine. Several Results (one per job)
// render as one report.
func RenderSummary(w io.Writer, rs []*results.Result) error {
	return renderSummary(w, rs, renderOptions{})
}

// renderOptions vary the summary.
type renderOptions struct {
	// level is how far a comment is shrunk to fit its budget (budget.go):
	// levelFull for summary.md.
	level int
	// expect are the targets the results must cover (Options.Expect).
	expect []string
	// artifacts link the run's artifacts by name (Options.Artifacts).
	artifacts map[string]string
}

func renderSummary(w io.Writer, rs []*results.Result, opt renderOptions) error {
	p := &summaryWriter{opt: opt}
	rs = results.SortedResults(rs)
	targets := results.SortedTargets(rs)
	v := results.Expecting(rs, opt.expect)
	p.headline(rs, targets, v)
	for _, t := range targets {
		p.target(t)
	}
	if p.opt.level < levelNoStages {
		for _, res := range rs {
			p.stages(res, len(rs) > 1)
		}
	}
	p.footer(rs, targets)
	if p.err != nil {
		return fmt.Errorf("render summary: %w", p.err)
	}
	_, err := io.WriteString(w, p.b.String())
	return err
}

// summaryWriter accumulates the summary; the first error of a section's Markdown
// method is kept.
type summaryWriter struct {
	b   strings.Builder
	err error
	opt renderOptions
}

func (p *summaryWriter) f(format string, a ...any) { fmt.Fprintf(&p.b, format, a...) }

// markdown writes a section rendered by its own Markdown method.
func (p *summaryWriter) markdown(md func(io.Writer) error) {
	if err := md(&p.b); err != nil && p.err == nil {
		p.err = err
	}
	p.blank()
}

// blank ends the current block with exactly one blank line.
func (p *summaryWriter) blank() {
	s := p.b.String()
	switch {
	case s == "", strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		p.b.WriteString("\n")
	default:
		p.b.WriteString("\n\n")
	}
}

func (p *summaryWriter) headline(rs []*results.Result, targets []results.JobTarget, v results.Verdict) {
	_, notRun := checksRun(rs)
	switch {
	case v.NothingChecked:
		// Not a pass, though nothing failed: the headline says what it
		// is, and "Ran:" below says what ran instead.
		p.f("## ⚪ patchproof: nothing was checked\n\n")
	case v.Status == results.StatusPassed:
		p.f("## ✅ patchproof: passed\n\n")
	case v.Status == results.StatusFailed:
		p.f("## ❌ patchproof: a check failed\n\n")
	case v.Status == results.StatusError:
		p.f("## ⚠️ patchproof: could not run\n\n")
	default:
		p.f("## %s patchproof: incomplete: the run did not finish\n\n", results.StatusIncomplete.Icon())
	}
	p.f("%s\n\n", subject(rs, targets))

	if v.Status != results.StatusPassed && !v.NothingChecked {
		// What did not finish first: nothing after it is the whole story.
		for _, u := range v.Unfinished {
			p.f("- %s %s\n", u.Status.Icon(), markdown.Text(u.String()))
		}
		n := len(v.Unfinished)
		for _, res := range rs {
			for _, s := range res.Stages {
				if s.Status != results.StatusFailed && s.Status != results.StatusError {
					continue
				}
				label := s.Name
				if len(rs) > 1 {
					label = results.JobName(res) + " " + s.Name
				}
				what := "failed"
				if s.Status == results.StatusError {
					what = "could not run"
				}
				p.f("- %s **%s** %s: %s\n", s.Status.Icon(), markdown.Text(label), what, markdown.Text(firstLine(s.Note())))
				n++
			}
		}
		if n == 0 {
			p.f("- %s %s\n", v.Status.Icon(), markdown.Text(v.Reason))
		}
		p.blank()
	}
	for _, res := range rs {
		for _, w := range res.Warnings {
			p.f("> [!WARNING]\n> %s\n\n", markdown.Text(w))
		}
	}
	if len(targets) == 0 && len(notRun) > 0 {
		p.f("Not run: %s.\n\n", markdown.Text(strings.Join(notRun, "; ")))
	}
	for _, t := range targets {
		p.verdictBlock(t, rs, len(targets) > 1)
	}
}

// subject says what was validated: the PR, or the repository and refs.
func subject(rs []*results.Result, targets []results.JobTarget) string {
	var parts []string
	s := rs[0].Settings
	switch {
	case s.Demo && strings.HasPrefix(s.Repo, "demo"):
		parts = append(parts, "The bundled "+markdown.Text(s.Repo))
	case s.Demo:
		parts = append(parts, "The bundled demo: "+markdown.Text(s.Repo))
	case s.PR > 0:
		ref := fmt.Sprintf("#%d", s.PR)
		if repo, ok := github.ParseRepo(s.Repo); ok {
			pr := github.PullRequest{Repo: repo, Number: s.PR}
			ref = fmt.Sprintf("[%s](%s)", pr, pr.Web())
		}
		parts = append(parts, "Pull request "+ref)
	default:
		parts = append(parts, markdown.Code(s.Repo))
	}
	var names []string
	for _, t := range targets {
		names = append(names, markdown.Text(t.Name))
	}
	if len(names) > 0 {
		parts = append(parts, plural(len(names), "target", "targets")+": "+strings.Join(names, ", "))
	}
	for _, res := range rs {
		if res.RunURL != "" {
			parts = append(parts, fmt.Sprintf("[the run](%s)", res.RunURL))
			break
		}
	}
	return strings.Join(parts, " · ")
}

// checksRun lists the stages that ran in any result, and those that ran in
// none, grouped by why: "tests, bench — not selected (--stages)".
func checksRun(rs []*results.Result) (ran, notRun []string) {
	var order, reasons []string
	did := map[string]bool{}
	why := map[string]string{}
	for _, res := range rs {
		for _, s := range res.Stages {
			if !slices.Contains(order, s.Name) {
				order = append(order, s.Name)
			}
			switch s.Status {
			case results.StatusPassed, results.StatusFailed, results.StatusError, results.StatusRunning, results.StatusInterrupted:
				did[s.Name] = true
			case results.StatusPending:
				if why[s.Name] == "" {
					why[s.Name] = strings.TrimSuffix("not started ("+s.Reason+")", " ()")
				}
			default:
				if why[s.Name] == "" {
					why[s.Name] = cmp.Or(s.Reason, "not started")
				}
			}
		}
	}
	for _, name := range order {
		if did[name] {
			ran = append(ran, name)
		} else if !slices.Contains(reasons, why[name]) {
			reasons = append(reasons, why[name])
		}
	}
	for _, reason := range reasons {
		var names []string
		for _, name := range order {
			if !did[name] && why[name] == reason {
				names = append(names, name)
			}
		}
		notRun = append(notRun, strings.Join(names, ", ")+" — "+reason)
	}
	return ran, notRun
}

// render writes a section made with summaryWriter's helpers to w.
func render(w io.Writer, section func(p *summaryWriter)) error {
	p := &summaryWriter{}
	section(p)
	if p.err != nil {
		return p.err
	}
	_, err := io.WriteString(w, p.b.String())
	return err
}
