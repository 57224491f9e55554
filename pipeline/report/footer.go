package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
)

// footer lists the commits of every target, then per Result its version,
// time, link, settings and machine.
func (p *summaryWriter) footer(rs []*results.Result, targets []results.JobTarget) {
	p.f("### Commits\n\n")
	if len(targets) > 0 {
		p.f("| target | base | base branch | head |\n|---|---|---|---|\n")
		for _, t := range targets {
			web := repoWeb(t.Repo)
			base := commitLink(web, t.Base.Commit)
			if t.Base.IsMergeBase {
				base += " (merge-base)"
			}
			branch := markdown.Code(t.Base.Ref)
			if t.Base.BranchTip != "" {
				branch += " at " + commitLink(web, t.Base.BranchTip)
			}
			head := commitLink(web, t.Head.Commit) + " " + markdown.Code(t.Head.Ref)
			if t.Head.Subject != "" {
				head += " " + markdown.Text(t.Head.Subject)
			}
			p.f("| %s | %s | %s | %s |\n", markdown.Text(t.Name), base, branch, head)
		}
		p.blank()
	} else {
		p.f("No target was planned.\n\n")
	}
	for _, res := range rs {
		label := ""
		if len(rs) > 1 {
			label = "**" + markdown.Text(results.JobName(res)) + "**: "
		}
		line := []string{fmt.Sprintf("%s%s %s", label, cmp.Or(res.Tool, "patchproof"), markdown.Text(res.Version))}
		line = append(line, "started "+res.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
		if res.FinishedAt != nil {
			line = append(line, "took "+fmtMS(res.FinishedAt.Sub(res.StartedAt).Milliseconds()))
		}
		if res.RunURL != "" {
			line = append(line, fmt.Sprintf("[run](%s)", res.RunURL))
		}
		p.f("%s\n\n", strings.Join(line, " · "))
		if p.opt.level < levelNoStages || res == rs[0] {
			p.settings(res)
		}
	}
	p.artifactsLine(rs)
	p.reproduceBlock(rs)
}

func (p *summaryWriter) settings(res *results.Result) {
	s, m := res.Settings, res.Machine
	p.f("<details><summary>Settings and machine</summary>\n\n")
	repo := markdown.Code(s.Repo)
	if s.PR > 0 {
		repo += fmt.Sprintf(" PR #%d", s.PR)
	}
	yes := map[bool]string{true: "yes", false: "no"}
	p.f("- repository: %s\n", repo)
	profile := markdown.Text(s.Profile)
	if s.ProfileText != "" {
		profile += " (" + markdown.Text(s.ProfileText) + ")"
	}
	p.f("- variants: %s · builder: %s · profile: %s · jobs: %d\n", markdown.Text(strings.Join(s.Variants, ", ")), markdown.Text(s.Builder), profile, s.Jobs)
	p.f("- stages: %s · NTS must not change: %s\n", markdown.Text(strings.Join(s.Stages, ", ")), yes[s.ExpectNTSNoop])
	machine := fmt.Sprintf("%s, %s", cmp.Or(m.Hostname, "unknown host"), plural(m.CPUs, "CPU", "CPUs"))
	if m.CPUModel != "" {
		machine += " (" + m.CPUModel + ")"
	}
	p.f("- machine: %s\n", markdown.Text(machine))
	if m.OS != "" || m.Kernel != "" {
		p.f("- system: %s\n", markdown.Text(strings.TrimSpace(m.OS+", Linux "+m.Kernel)))
	}
	p.f("\n</details>\n\n")
}

// commitLink is a short commit hash, linked when the repository is on the
// web.
func commitLink(web, commit string) string {
	if strings.Trim(commit, "0") == "" { // none, or the zero hash of a backport that did not apply
		return "—"
	}
	short := commit[:min(12, len(commit))]
	if web == "" {
		return markdown.Code(short)
	}
	return fmt.Sprintf("[%s](%s/commit/%s)", markdown.Code(short), web, commit)
}

// repoWeb is the web page of a repository URL, or "" for a local path, a
// file:// URL or the demo.
func repoWeb(repo string) string {
	r, _ := github.ParseRepo(repo)
	return r.Web()
}
