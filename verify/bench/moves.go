package bench

import (
	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Moves are the benchmark's comparisons of head with base that decided a
// change, improved or regressed: per measure, with statistics off, on,
// and of the cost of statistics, each with its size and the rule's
// tolerance or interval, as the section's table has it. What is shown
// but not judged, and what did not move, is the section's.
func (r *Result) Moves() []verdict.Move {
	if r == nil {
		return nil
	}
	var ms []verdict.Move
	for _, m := range r.Measures {
		for _, p := range parts(m) {
			if v := p.c.Verdict; v == verdict.Improved || v == verdict.Regressed {
				ms = append(ms, verdict.Move{
					What: markdown.Text(m.Label()) + ", " + p.what,
					How:  v.Icon() + " " + markdown.Text(compareCell(m, p)),
				})
			}
		}
	}
	return verdict.Capped(ms)
}
