package trigger

import (
	"regexp"
	"strings"
	"unicode"
)

// Command is what a "/patchproof [BRANCHES|none] [SHA]" comment asks for.
type Command struct {
	// Backports is the comma-separated branches named, "" when the
	// comment names none (the default applies).
	Backports string
	// None is "/patchproof none": the base branch only.
	None bool
	// Commit is the head commit named, 7 to 40 lowercase hex digits, or "".
	Commit string
}

var (
	commandRE = regexp.MustCompile(`^/patchproof(?:\s+(\S+))?(?:\s+(\S+))?\s*$`)
	commitRE  = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	// anyHexRE is a word that looks like a commit in any case: one in
	// upper case is refused, rather than read as a branch nobody has.
	anyHexRE = regexp.MustCompile(`^[0-9A-Fa-f]{7,40}$`)
)

const grammar = "the first line must be '/patchproof', '/patchproof BRANCH,BRANCH' or '/patchproof none', optionally followed by the head commit"

// ParseCommand reads a comment's first line. A lone word of 7 to 40
// lowercase hex digits is the commit, not a branch: to name such a branch,
// give the commit after it.
func ParseCommand(body string) (Command, error) {
	first, _, _ := strings.Cut(body, "\n")
	first = strings.TrimSuffix(first, "\r")
	m := commandRE.FindStringSubmatch(first)
	if m == nil {
		return Command{}, refusef("not a patchproof command: %s", grammar)
	}
	var c Command
	branches, commit := m[1], m[2]
	if commit == "" && anyHexRE.MatchString(branches) {
		branches, commit = "", m[1]
	}
	switch {
	case commit == "":
	case commitRE.MatchString(commit):
		c.Commit = commit
	case anyHexRE.MatchString(commit):
		return Command{}, refusef("%s is not a commit: name it in lowercase hex", commit)
	default:
		return Command{}, refusef("%s is not a commit (7 to 40 lowercase hex digits): %s", commit, grammar)
	}
	switch branches {
	case "":
	case "none":
		c.None = true
	default:
		c.Backports = branches
	}
	return c, nil
}

// splitBranches reads a comma-separated branch list as the workflow's
// inputs and variables give it: whitespace anywhere is dropped, empty items
// are skipped, and "none" alone is no branch.
func splitBranches(list string) ([]string, error) {
	if strings.TrimSpace(list) == "none" {
		return nil, nil
	}
	var out []string
	for _, b := range strings.Split(list, ",") {
		b = strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, b)
		if b == "" {
			continue
		}
		if !validBranch(b) {
			return nil, refusef("bad backport branch: %s", b)
		}
		out = append(out, b)
	}
	return out, nil
}

var branchRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)

// validBranch is what a branch name must be to reach a command line and an
// artifact name: no option, no "..", nothing a shell would read.
func validBranch(b string) bool {
	return branchRE.MatchString(b) && !strings.Contains(b, "..")
}
