// Package side names the two sides of every comparison patchproof makes:
// base, the code without the change, and head, the code with it. A build, a
// test run and a benchmark arm are each of one side, and results.json spells
// the side "base" or "head".
package side

// Side is Base or Head.
type Side string

const (
	Base Side = "base"
	Head Side = "head"
)

// Sides are both, in the order a report shows them.
var Sides = [...]Side{Base, Head}
