package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/results"
)

// An answerer is a check's answer to its question in one line of the
// verdict block; a check without one answers with its Cell.
type answerer interface{ Answer() string }

// A caveated check has what a reviewer must know though it gates nothing
// (PHP crashed in the servers, CPU steal, one counted pass).
type caveated interface{ Caveats() []string }

// questions are the reviewer's five, in the README's order: each line of
// a target's verdict block answers one, by the title of its check.
var questions = []struct {
	n     int
	label string
	title string
}{
	{1, "NTS", "NTS machine code"},
	{2, "tests", "tests"},
	{3, "contention", "cost of statistics, head vs base"},
	{4, "concurrency", "concurrency"},
}

// verdictBlock is a target's answers: its commits, one line per question
// with its number, and a ⚠️ line for what is not gated but a reviewer
// must know. withName heads it with the target's name, for a report of
// several.
func (p *summaryWriter) verdictBlock(t results.JobTarget, rs []*results.Result, withName bool) {
	p.f("%s\n", commitsLine(t, withName))
	byTitle := map[string]Section{}
	for _, s := range sections(t) {
		byTitle[s.title] = s.Section
	}
	// What ran is the target's own job's: in a merge of one job per
	// target, another target's skipped stage is not this one's.
	own := rs
	if t.Job != nil {
		own = []*results.Result{t.Job}
	}
	var caveats []string
	notRun := notRunReasons(own)
	for _, q := range questions {
		s := byTitle[q.title]
		var answer string
		switch {
		case t.Backport != nil && !t.Backport.Applied:
			answer = "not checked: the change does not apply"
		case s == nil:
			answer = "not run" + notRun[stageOf(q.title)]
		default:
			if a, ok := s.(answerer); ok {
				answer = a.Answer()
			} else {
				answer = strings.ReplaceAll(s.Cell(), "<br>", "; ")
			}
			if c, ok := s.(caveated); ok {
				caveats = append(caveats, c.Caveats()...)
			}
		}
		p.f("%d. %s: %s\n", q.n, q.label, answer)
	}
	five := backportAnswer(t, rs)
	if t.ABI != nil && (t.Backport == nil || t.Backport.Applied) {
		// Does it backport is also: does it keep the branch's ABI.
		five += "; ABI " + strings.ReplaceAll(t.ABI.Cell(), "<br>", ", ")
	}
	p.f("5. %s\n", five)
	caveats = append(caveats, stagesSkipped(own)...)
	if len(caveats) > 0 {
		p.f("- ⚠️ not gated: %s\n", strings.Join(caveats, "; "))
	}
	p.blank()
}

// commitsLine names what a target compared: head against base.
func commitsLine(t results.JobTarget, withName bool) string {
	web := repoWeb(t.Repo)
	base := commitLink(web, t.Base.Commit)
	switch {
	case t.Base.IsMergeBase:
		base += " (merge-base with " + markdown.Code(t.Base.Ref) + ")"
	case t.Base.Ref != "":
		base += " (" + markdown.Code(t.Base.Ref) + ")"
	}
	head := commitLink(web, t.Head.Commit)
	if t.Backport != nil {
		head += " (" + mergedFrom(t.Backport) + ")"
	} else if t.Head.Ref != "" {
		head += " (" + markdown.Code(t.Head.Ref) + ")"
	}
	s := "head " + head + " against base " + base
	if withName {
		return "**" + markdown.Text(t.Name) + "**: " + s
	}
	return "Head " + head + " against base " + base
}

// backportAnswer is question 5: for a backport target, whether the change
// applies onto its branch; for the change's own target, each backport of
// the report.
func backportAnswer(t results.JobTarget, rs []*results.Result) string {
	if bp := t.Backport; bp != nil && bp.MergeUp {
		return "merge-up into " + markdown.Text(bp.Branch) + ": " + backportCell(bp)
	}
	if bp := t.Backport; bp != nil {
		return "backport onto " + markdown.Text(bp.Branch) + ": " + backportCell(bp)
	}
	var parts []string
	for _, o := range results.SortedTargets(rs) {
		if o.Backport != nil {
			parts = append(parts, markdown.Text(o.Backport.Branch)+" "+backportCell(o.Backport))
		}
	}
	if len(parts) == 0 {
		return "backports: none asked for (`--backport-to`)"
	}
	return "backports: " + strings.Join(parts, ", ")
}

// stageOf is the stage that answers the check of a title.
func stageOf(title string) string {
	switch title {
	case "NTS machine code":
		return "codediff"
	case "tests":
		return "tests"
	case "concurrency":
		return "race"
	}
	return "bench"
}

// notRunReasons are, by stage, why it did not run in any result: ": not
// selected (--stages)".
func notRunReasons(rs []*results.Result) map[string]string {
	why := map[string]string{}
	for _, res := range rs {
		for _, s := range res.Stages {
			if s.StartedAt == nil && s.Reason != "" && why[s.Name] == "" {
				why[s.Name] = ": " + markdown.Text(s.Reason)
			}
		}
	}
	return why
}

// stagesSkipped are the checks a reviewer might take for done: a stage
// the run skipped, or could not run here, for a reason other than not
// being asked for, and that no question's line says is not run.
func stagesSkipped(rs []*results.Result) []string {
	var out []string
	for _, res := range rs {
		for _, s := range res.Stages {
			if !s.IsCheck() || strings.Contains(s.Reason, "--stages") || answered(s.Name) {
				continue
			}
			what := "skipped"
			switch s.Status {
			case results.StatusSkipped:
			case results.StatusNotAvailable:
				what = "not available"
			default:
				continue
			}
			line := fmt.Sprintf("stage %s %s (%s)", s.Name, what, markdown.Text(s.Reason))
			if !slices.Contains(out, line) {
				out = append(out, line)
			}
		}
	}
	return out
}

// answered says whether a question's line tells of stage's outcome.
func answered(stage string) bool {
	for _, q := range questions {
		if stageOf(q.title) == stage {
			return true
		}
	}
	return false
}
