package codediff

import (
	"fmt"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Moves are the NTS functions whose machine code differs, each a row of
// the report's "What moved" table: with --expect-nts-noop each fails the
// run.
func (r *Result) Moves() []verdict.Move {
	if r == nil || r.NTS == nil {
		return nil
	}
	icon := ""
	if r.ExpectNTSNoop {
		icon = verdict.Failed.Icon() + " "
	}
	return funcMoves(r.NTS, icon)
}

// Moves of the ZTS comparison are one row, its counts: the change is
// expected to touch ZTS code, and the section lists the functions.
func (i Information) Moves() []verdict.Move {
	if i.r == nil || i.r.ZTS == nil || i.r.ZTS.AllIdentical() {
		return nil
	}
	z := i.r.ZTS
	return []verdict.Move{{
		What: "machine code (information only)",
		How:  fmt.Sprintf("%s of %d functions", changeCounts(z), z.Compared),
	}}
}

// funcMoves are r's differing functions, each How marked with icon.
func funcMoves(r *Report, icon string) []verdict.Move {
	var ms []verdict.Move
	for _, d := range r.Changed {
		ms = append(ms, verdict.Move{
			What: fmt.Sprintf("%s in %s", markdown.Code(d.Name), markdown.Code(d.Object)),
			How:  fmt.Sprintf("%smachine code changed (%d → %d bytes)", icon, d.BaseSize, d.HeadSize),
		})
	}
	for _, f := range r.Added {
		ms = append(ms, verdict.Move{
			What: fmt.Sprintf("%s in %s", markdown.Code(f.Name), markdown.Code(f.Object)),
			How:  fmt.Sprintf("%sadded (%d bytes)", icon, f.Size),
		})
	}
	for _, f := range r.Removed {
		ms = append(ms, verdict.Move{
			What: fmt.Sprintf("%s in %s", markdown.Code(f.Name), markdown.Code(f.Object)),
			How:  fmt.Sprintf("%sremoved (%d bytes)", icon, f.Size),
		})
	}
	return verdict.Capped(ms)
}
