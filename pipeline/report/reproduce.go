package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/verdict"
)

// reproduce is the command that reruns target t of res locally: the same
// source, the same target and stages, the settings that differ from the
// defaults.
func reproduce(res *results.Result, t results.JobTarget) string {
	s := res.Settings
	args := []string{"patchproof", "run"}
	base := t.Base.Ref
	if bp := t.Backport; bp != nil {
		base = bp.From
	}
	switch {
	case s.Demo:
	case s.PR > 0:
		args = append(args, "--pr", strconv.Itoa(s.PR))
		if repo, ok := github.ParseRepo(s.Repo); !ok || repo != github.PHPSrc {
			args = append(args, "--repo", s.Repo)
		}
		args = append(args, "--base", base)
	default:
		head := t.Head.Ref
		if t.Backport != nil {
			head = t.Backport.FromCommit
		}
		args = append(args, "--repo", s.Repo, "--base", base, "--head", head)
	}
	// Pinned to the head the run validated: a rerun of a head that moved
	// since is refused rather than run on other code.
	if pin := validatedHead(t); !s.Demo && pin != "" {
		args = append(args, "--expect-head", pin)
	}
	if bp := t.Backport; bp != nil {
		if bp.MergeUp {
			args = append(args, "--merge-up", strings.Join(bp.Chain, ","))
		} else if bp.Explicit != "" {
			args = append(args, "--backport", bp.Branch+"="+bp.Explicit)
		} else {
			args = append(args, "--backport-to", bp.Branch)
		}
	}
	args = append(args, "--target", t.Name)
	if len(s.Flags) > 0 {
		// Every setting the run was given, each check's own included.
		args = append(args, s.Flags...)
	} else {
		args = legacySettings(args, s)
	}
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// validatedHead is the head commit target t was made from: the pull
// request's, for a backport of it.
func validatedHead(t results.JobTarget) string {
	if t.Backport != nil {
		return t.Backport.FromCommit
	}
	return t.Head.Commit
}

// legacySettings are the settings a results.json without Settings.Flags
// records, as flags, after args.
func legacySettings(args []string, s results.Settings) []string {
	if len(s.Stages) > 0 {
		args = append(args, "--stages", strings.Join(s.Stages, ","))
	}
	if v := strings.Join(s.Variants, ","); v != "" && v != "nts,zts" {
		args = append(args, "--variants", v)
	}
	if s.Builder != "" && s.Builder != "host" {
		args = append(args, "--builder", s.Builder)
	}
	if s.Profile != "" && s.Profile != "mysql" {
		args = append(args, "--profile", s.Profile)
	}
	if !s.ExpectNTSNoop {
		args = append(args, "--expect-nts-noop=false")
	}
	if s.ABI != "" && s.ABI != "fail" {
		args = append(args, "--abi", s.ABI)
	}
	return args
}

// shellQuote makes a word safe to paste into a POSIX shell: names from the
// repository (branches, refs) are untrusted.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// reproduceBlock is the footer's folded list of the commands that rerun
// each target.
func (p *summaryWriter) reproduceBlock(rs []*results.Result) {
	var lines []string
	for _, res := range results.SortedResults(rs) {
		for _, t := range results.SortedTargets([]*results.Result{res}) {
			lines = append(lines, reproduce(res, t))
		}
	}
	if len(lines) == 0 {
		return
	}
	p.f("<details><summary>How to reproduce</summary>\n\n")
	p.f("Each target, rerun on a machine of your own:\n\n%s\n", markdown.CodeBlock("sh", strings.Join(lines, "\n")))
	p.f("</details>\n\n")
}

// artifactsLine says which of the run's files the artifacts hold, named
// as the run directory has them, so that what the comment refers to can
// be found: validate.yml uploads each (a test checks it).
func (p *summaryWriter) artifactsLine(rs []*results.Result) {
	files := []string{"`results.json`", "`summary.md`"}
	for _, a := range artifacts(results.SortedTargets(rs)) {
		files = append(files, a.String())
	}
	where := "The run's artifacts"
	for _, res := range rs {
		if res.RunURL != "" {
			where = "[The run's artifacts](" + res.RunURL + "#artifacts)"
			break
		}
	}
	p.f("%s hold %s, and the stages' logs.\n\n", where, strings.Join(files, ", "))
	if links := p.artifactLinks(results.SortedTargets(rs)); links != "" {
		p.f("%s\n", links)
	}
}

// artifacts are what the targets' checks tell of among the run's
// artifacts: check by check in the order of the questions they answer,
// target by target. Each What is named once, after every check that tells
// of it (the servers' logs, after the last check that starts servers),
// with every target's Files.
func artifacts(targets []results.JobTarget) []verdict.Artifact {
	var out []verdict.Artifact
	for _, i := range questionOrder() {
		for _, t := range targets {
			a, ok := t.Checks()[i].Result.(artifacted)
			if !ok {
				continue
			}
			for _, art := range a.Artifacts() {
				if j := slices.IndexFunc(out, func(o verdict.Artifact) bool { return o.What == art.What }); j >= 0 {
					art.Files = append(slices.Clone(out[j].Files), art.Files...)
					out = slices.Delete(out, j, j+1)
				}
				out = append(out, art)
			}
		}
	}
	return out
}

// artifactKinds are a validate job's three uploads (validate.yml:
// patchproof-KIND-SLUG) and what each holds, in the run directory's names
// (a test holds them to the upload steps' paths).
var artifactKinds = []struct{ kind, holds string }{
	{"results", "`results.json`, `summary.md`, `junit.xml`, `bench.txt`"},
	{"evidence", "`bench.json`, `sweep.svg`, `flamegraph.svg`, `*.tsan.log`, `error.log`"},
	{"logs", "`logs/`"},
}

// artifactLinks lists, a line per target, the links to its job's
// artifacts (renderOptions.artifacts); "" when there are none. A zip's
// files have no links of their own: the artifact's page is the finest.
func (p *summaryWriter) artifactLinks(targets []results.JobTarget) string {
	if len(p.opt.artifacts) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range targets {
		var parts []string
		for _, k := range artifactKinds {
			if u, ok := p.opt.artifacts["patchproof-"+k.kind+"-"+results.Slug(t.Name)]; ok {
				parts = append(parts, fmt.Sprintf("[%s](%s) (%s)", k.kind, u, k.holds))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, "- %s: %s\n", markdown.Code(t.Name), strings.Join(parts, " · "))
		}
	}
	return b.String()
}
