package report

import (
	"bufio"
	"strings"
	"unicode/utf8"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
)

// commentBudget is the most characters the posted comment may have, well
// under GitHub's 65,536, so that three to five targets fit whole.
const commentBudget = 60000

// HistoryReserve is the part of the budget left for the block of earlier
// runs' verdicts that the GitHub side adds when it posts: the bound that
// side keeps it under, so that the two cannot drift apart.
const HistoryReserve = github.MaxHistory

// bodyBudget is what the summary itself may take of the comment.
const bodyBudget = commentBudget - HistoryReserve

// The levels of a comment's shrinking, in order: each leaves out what
// matters least of what is still there. The verdict block, the target
// headings and the commits table are never left out.
const (
	levelFull        = iota // summary.md: everything
	levelNoSamples          // the benchmark's settings, samples and raw tables (in results.json)
	levelNoDiffs            // the disassembly diffs (in summary.md)
	levelNoStages           // the stage charts, and the settings of all but the first job
	levelFailingOnly        // the sections of checks that passed
	levelVerdicts           // every target's sections
	levelLast        = levelVerdicts
)

// commentBody is the summary as a comment: the least shrunk that fits the
// budget, and as a last resort cut at a block boundary outside any table,
// code block or <details>, so that what is left still renders.
func commentBody(rs []*results.Result, opt renderOptions) (string, error) {
	var s string
	for level := levelNoSamples; level <= levelLast; level++ {
		var b strings.Builder
		opt.level = level
		if err := renderSummary(&b, rs, opt); err != nil {
			return "", err
		}
		s = b.String()
		if utf8.RuneCountInString(s) <= bodyBudget {
			return s, nil
		}
	}
	const cut = "\n… (cut here: the comment would exceed its size budget; summary.md among the artifacts has all of it)\n"
	return safeCut(s, bodyBudget-utf8.RuneCountInString(cut)) + cut, nil
}

// safeCut is the longest prefix of s of at most n characters that ends
// at a blank line outside any code block and <details>: a table or a list
// ends there.
func safeCut(s string, n int) string {
	best, runes, depth := 0, 0, 0
	fence := false
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64*1024), len(s)+1)
	pos := 0
	for sc.Scan() {
		line := sc.Text()
		pos += len(line) + 1
		runes += utf8.RuneCountInString(line) + 1
		if runes > n {
			break
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fence = !fence
		case fence:
		default:
			depth += strings.Count(line, "<details") - strings.Count(line, "</details>")
		}
		if trimmed == "" && !fence && depth == 0 {
			best = min(pos, len(s))
		}
	}
	return s[:best]
}
