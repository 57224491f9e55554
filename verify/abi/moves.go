package abi

import (
	"fmt"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Moves are the ABI changes, variant by variant: each break (marked by
// what it does to the target, as the verdict block's line is), then how
// many changes break nothing.
func (r *Result) Moves() []verdict.Move {
	if r == nil {
		return nil
	}
	icon := r.breakIcon() + " "
	var ms []verdict.Move
	for _, v := range r.Variants {
		compatible := 0
		for _, c := range v.Changes {
			if !c.Break {
				compatible++
				continue
			}
			what := markdown.Code(c.Subject)
			if c.Member != "" {
				what += " member " + markdown.Code(c.Member)
			}
			how := icon + markdown.Text(string(c.Kind))
			if c.Base != "" || c.Head != "" {
				how += ": " + markdown.Text(orNone(c.Base)) + " → " + markdown.Text(orNone(c.Head))
			}
			ms = append(ms, verdict.Move{What: fmt.Sprintf("%s (%s)", what, markdown.Text(v.Name)), How: how})
		}
		if compatible > 0 {
			ms = append(ms, verdict.Move{What: fmt.Sprintf("%s (%s)", plural(compatible, "change", "changes"), markdown.Text(v.Name)), How: "break nothing (layout-compatible, added)"})
		}
	}
	return verdict.Capped(ms)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
