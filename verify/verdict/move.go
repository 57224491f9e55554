package verdict

import "fmt"

// A Move is one thing a check found different between base and head: a
// row of the report's "What moved" table, which a reviewer reads before
// any section. What is what moved and How by how much (an outcome, a
// size with its interval); both are Markdown, escaped by the check that
// made them.
type Move struct {
	What string
	How  string
}

// MaxMoves caps the rows one check gives the table: a head that changes
// everything is a few rows and a count, the rest in its section.
const MaxMoves = 8

// Capped is ms with at most MaxMoves rows: past that, the last says how
// many more the check's section has.
func Capped(ms []Move) []Move {
	if len(ms) <= MaxMoves {
		return ms
	}
	rest := len(ms) - (MaxMoves - 1)
	return append(ms[:MaxMoves-1:MaxMoves-1], Move{What: fmt.Sprintf("and %d more", rest), How: "in the section below"})
}
