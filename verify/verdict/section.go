package verdict

import (
	"io"
	"strings"
)

// A Section is a check's part of a target's report, which the report
// (pipeline/report) walks in the order of the target's checks: Label, its
// name in the report's tables ("NTS", "tests"); Cell, its short answer;
// and WriteSection, its section. A check's result gives its sections
// (Sections) where it has something to show, and may say more through
// the report's optional methods: Answer, Caveats, Moves,
// WriteCompactSection.
type Section interface {
	Label() string
	Cell() string
	WriteSection(w io.Writer) error
}

// An Artifact is a file of the run's artifacts that a check tells of,
// as the report's artifacts line names it: What (Markdown, escaped by the
// check), and the Files of one target, listed in parentheses after it.
// The report names each What once, after every check that tells of it,
// with every target's Files.
type Artifact struct {
	What  string
	Files []string
}

func (a Artifact) String() string {
	if len(a.Files) == 0 {
		return a.What
	}
	return a.What + " (" + strings.Join(a.Files, ", ") + ")"
}

// ServerLogs is the artifact of every check that starts servers: the
// error.log each server's directory keeps.
var ServerLogs = Artifact{What: "the servers' `error.log`"}

// OneSection is the Sections of a check whose result is its one section:
// that section, none where the check did not run (r is nil).
func OneSection[R any, P interface {
	*R
	Section
}](r P) []Section {
	if r == nil {
		return nil
	}
	return []Section{r}
}

// Check is the declared shape of a check's part of a target's results,
// which the report walks (results.TargetResult.Checks): each verify
// package's Result asserts it at compile time, and every method answers
// on a nil Result too (a target the check did not run on).
//
// Label, Cell and WriteSection make the check its own first Section;
// Sections are what it shows (none where it did not run); Question is
// which of the reviewer's five questions it answers; Answer is its line
// under that question ("" where its Cell says it); Caveats are what a
// reviewer must know though it gates nothing; Moves are its rows of the
// "What moved" table; Artifacts are the files it tells of among the run's
// artifacts.
type Check interface {
	Section
	Sections() []Section
	Question() int
	Answer() string
	Caveats() []string
	Moves() []Move
	Artifacts() []Artifact
}
