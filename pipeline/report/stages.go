package report

import (
	"cmp"
	"fmt"
	"html"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/results"
)

// stages is the stage table of one Result, with a chart of where the time
// went and the warnings and long errors folded.
func (p *summaryWriter) stages(res *results.Result, merged bool) {
	if len(res.Stages) == 0 {
		return
	}
	if merged {
		p.f("### Stages: %s\n\n", markdown.Text(results.JobName(res)))
	} else {
		p.f("### Stages\n\n")
	}
	shown := res.Stages
	p.chart(shown)
	p.f("| stage | status | time | note |\n|---|---|--:|---|\n")
	for _, s := range shown {
		t := "—"
		if s.StartedAt != nil {
			t = fmtMS(s.DurationMS)
		}
		note := markdown.Text(cmp.Or(firstLine(s.Note()), s.Reason))
		if n := len(s.Warnings); n > 0 {
			note = strings.TrimPrefix(note+"; ", "; ") + "⚠️ " + plural(n, "warning", "warnings")
		}
		p.f("| %s | %s %s | %s | %s |\n", s.Name, s.Status.Icon(), s.Status, t, note)
	}
	p.blank()
	for _, s := range shown {
		long := strings.Contains(strings.TrimSpace(s.Error), "\n") || len(s.Error) > 160
		if !long && len(s.Warnings) == 0 {
			continue
		}
		var what []string
		if long {
			what = append(what, "error")
		}
		if n := len(s.Warnings); n > 0 {
			what = append(what, plural(n, "warning", "warnings"))
		}
		p.f("<details><summary>%s: %s</summary>\n\n", html.EscapeString(s.Name), strings.Join(what, ", "))
		if long {
			p.f("%s\n", markdown.CodeBlock("text", s.Error))
		}
		for _, w := range s.Warnings {
			p.f("- %s\n", markdown.Text(w))
		}
		p.blank()
		if s.Log != "" {
			p.f("Log: `%s`\n\n", s.Log)
		}
		p.f("</details>\n\n")
	}
}

// chartWidth is the longest bar, in character cells.
const chartWidth = 24

// chart draws the stages' durations as bars: where the time went reads
// faster from bars than from a column of numbers. It is text, so it renders
// in a PR comment.
func (p *summaryWriter) chart(stages []*results.StageResult) {
	var ran []*results.StageResult
	var longest int64
	for _, s := range stages {
		if s.StartedAt != nil {
			ran = append(ran, s)
			longest = max(longest, s.DurationMS)
		}
	}
	if len(ran) < 2 || longest <= 0 {
		return
	}
	nameWidth := 0
	for _, s := range ran {
		nameWidth = max(nameWidth, len(s.Name))
	}
	var lines []string
	for _, s := range ran {
		bar := chartBar(float64(s.DurationMS) / float64(longest) * chartWidth)
		lines = append(lines, fmt.Sprintf("%-*s %s %7s", nameWidth, s.Name, bar, fmtMS(s.DurationMS)))
	}
	p.f("%s\n", markdown.CodeBlock("text", strings.Join(lines, "\n")))
}

// chartBar draws cells character cells in eighths; anything above zero shows.
func chartBar(cells float64) string {
	eighths := int(cells*8 + 0.5)
	if eighths == 0 && cells > 0 {
		eighths = 1
	}
	partial := []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}
	s := strings.Repeat("█", eighths/8) + partial[eighths%8]
	// Pad to the width in cells: %-*s counts bytes, not cells.
	return s + strings.Repeat(" ", max(0, chartWidth-(eighths+7)/8))
}
