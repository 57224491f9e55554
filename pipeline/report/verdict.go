package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/verdict"
)

// An answerer is a check's answer to its question in one line of the
// verdict block; a check without one answers with its Cell.
type answerer interface{ Answer() string }

// A caveated check has what a reviewer must know though it gates nothing
// (PHP crashed in the servers, CPU steal, one counted pass).
type caveated interface{ Caveats() []string }

// verdictBlock is a target's answers: its commits, one line per question
// with its number, and a ⚠️ line for what is not gated but a reviewer
// must know. withName heads it with the target's name, for a report of
// several. Each check with a Question answers it (questionOrder).
func (p *summaryWriter) verdictBlock(t results.JobTarget, rs []*results.Result, withName bool) {
	p.f("%s\n", commitsLine(t, withName))
	// What ran is the target's own job's: in a merge of one job per
	// target, another target's skipped stage is not this one's.
	own := rs
	if t.Job != nil {
		own = []*results.Result{t.Job}
	}
	unapplied := t.Backport != nil && !t.Backport.Applied
	var caveats, backports []string
	notRun := notRunReasons(own)
	checks := t.Checks()
	for _, i := range questionOrder() {
		c := checks[i]
		n := question(c)
		if n == 0 {
			continue
		}
		label := c.Result.(verdict.Check).Label()
		var ss []Section
		if !unapplied {
			ss = sectionsOf(c)
		}
		if len(ss) > 0 {
			if cv, ok := ss[0].(caveated); ok {
				caveats = append(caveats, cv.Caveats()...)
			}
		}
		switch {
		case n == backportQuestion:
			// Does it backport is also: does it keep what this check
			// keeps (the branch's ABI); nothing to add where it did not
			// run.
			if len(ss) > 0 {
				backports = append(backports, label+" "+answer(ss[0]))
			}
			continue
		case unapplied:
			p.f("%d. %s: not checked: the change does not apply\n", n, label)
		case len(ss) == 0:
			p.f("%d. %s: not run%s\n", n, label, notRun[c.Stage])
		default:
			p.f("%d. %s: %s\n", n, label, answer(ss[0]))
		}
	}
	p.f("%d. %s\n", backportQuestion, strings.Join(append([]string{backportAnswer(t, rs)}, backports...), "; "))
	caveats = append(caveats, stagesSkipped(own)...)
	if len(caveats) > 0 {
		p.f("- ⚠️ not gated: %s\n", strings.Join(caveats, "; "))
	}
	p.blank()
}

// answer is a section's answer to its question, in one line.
func answer(s Section) string {
	if a, ok := s.(answerer); ok && a.Answer() != "" {
		return a.Answer()
	}
	return strings.ReplaceAll(s.Cell(), "<br>", "; ")
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

// answered says whether a question's line tells of stage's outcome: a
// check of it answers one of the questions before the report's own.
func answered(stage string) bool {
	for _, c := range (&results.TargetResult{}).Checks() {
		if n := question(c); c.Stage == stage && n > 0 && n < backportQuestion {
			return true
		}
	}
	return false
}
