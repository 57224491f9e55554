package benchstat

// Change is what a comparison of head with base (or of one arm with
// another) concludes about a measure, as results.json spells it; "" where
// nothing was compared.
type Change string

const (
	Improved  Change = "improved"
	Regressed Change = "regressed"
	NoChange  Change = "no significant change"
	// NotDecided is a comparison that could not conclude: too few samples,
	// or a spread wider than any effect it could show.
	NotDecided Change = "not decided"
	// NotJudged is a measure shown with its interval and p but given no
	// verdict by design: it explains a judged one (CPU time's user and
	// system halves, context switches, throughput).
	NotJudged Change = "not judged"
)

// Changes lists every change this version writes.
var Changes = []Change{Improved, Regressed, NoChange, NotDecided, NotJudged}

// String is the change as benchstat would print it: "~" for no change.
func (c Change) String() string {
	switch c {
	case NoChange:
		return "~"
	case "":
		return "not compared"
	}
	return string(c)
}

// Icon marks a change in the report: only a regression is red.
func (c Change) Icon() string {
	switch c {
	case Improved:
		return "✅"
	case Regressed:
		return "❌"
	case NoChange:
		return "➖"
	}
	return "❔"
}
