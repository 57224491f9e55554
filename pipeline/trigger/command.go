package trigger

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/patchproof/patchproof/pipeline"
)

// Command is what a "/patchproof" comment asks for (see [Grammar]).
type Command struct {
	// Help is "/patchproof help": the grammar is answered, nothing runs.
	Help bool
	// Backports is the comma-separated branches named, "" when the
	// comment names none (the default applies).
	Backports string
	// None is "/patchproof none": the base branch only.
	None bool
	// Commit is the head commit named, 7 to 40 lowercase hex digits, or "".
	Commit string
	// Bench is the benchmark's settings (bench=quick|report), "" for the
	// workflow's default.
	Bench string
	// Threads is the thread counts (threads=1,2,4,16), comma-separated as
	// patchproof run's --threads takes them, "" for the default.
	Threads string
	// Stages is the stages to run (stages=codediff,tests), comma-separated
	// as --stages takes them, "" for all.
	Stages string
	// MergeUp is the higher branches to merge the change up into, in
	// order (merge-up=PHP-8.5,master), as --merge-up takes them; "" for
	// none.
	MergeUp string
}

// Grammar is the comment's grammar as a maintainer reads it: the answer to
// "/patchproof help" and the end of every refusal's reply. The checks it
// names are the pipeline's.
var Grammar = fmt.Sprintf(`/patchproof [BRANCH,BRANCH...|none] [SHA] [bench=quick|report] [threads=N,N...] [stages=STAGE,STAGE...] [merge-up=BRANCH,BRANCH...]
/patchproof help

On the first line of a new comment on the pull request. BRANCH,BRANCH are the
branches to backport the change to (spaces after the commas are fine; none:
the base branch only; default the workflow's list). SHA is the PR's head
commit, 7 to 40 lowercase hex digits: name it when you pushed just before
commenting. bench= picks the benchmark's settings, threads= the PHP thread
counts (a list also measures the cost at each count), stages= the checks
to run, of %s (the checkout and the builds they
need come with them). merge-up= validates a change to the lowest branch
merged up into each higher branch in order, as php-src merges up.

Examples:
  /patchproof
  /patchproof PHP-8.4, PHP-8.5 bench=report
  /patchproof none 1a2b3c4 stages=codediff,tests
  /patchproof threads=1,4,16
  /patchproof none merge-up=PHP-8.5,master`, strings.Join(checkNames(), ", "))

// checkNames are the stages a comment names: every stage of the pipeline
// but its prerequisites, which come with them.
func checkNames() []string {
	var names []string
	for _, n := range pipeline.StageNames() {
		if !slices.Contains(pipeline.Prerequisites(), n) {
			names = append(names, n)
		}
	}
	return names
}

var (
	commentRE = regexp.MustCompile(`^/patchproof(\s.*)?$`)
	commaRE   = regexp.MustCompile(`\s*,\s*`)
	commitRE  = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	// anyHexRE is a word that looks like a commit in any case: one in
	// upper case is refused, rather than read as a branch nobody has.
	anyHexRE = regexp.MustCompile(`^[0-9A-Fa-f]{7,40}$`)
)

// maxThreads bounds a thread count a comment may ask for: far above any
// runner's CPUs, low enough that no comment starts a server of a million
// threads.
const maxThreads = 256

const shortGrammar = "'/patchproof [BRANCH,BRANCH...|none] [SHA] [bench=quick|report] [threads=LIST] [stages=LIST] [merge-up=LIST]' or '/patchproof help'"

// ParseCommand reads a comment's first line. A lone word of 7 to 40
// lowercase hex digits is the commit, not a branch: to name such a branch,
// give the commit after it. Spaces around the commas of a list are
// dropped, as people type them; options (KEY=VALUE) may come anywhere
// after the command and each is checked as patchproof run checks its flag.
func ParseCommand(body string) (Command, error) {
	if err := isCommand(body); err != nil {
		return Command{}, err
	}
	first := firstLine(body)
	words := strings.Fields(commaRE.ReplaceAllString(strings.TrimPrefix(first, "/patchproof"), ","))
	if len(words) == 1 && words[0] == "help" {
		return Command{Help: true}, nil
	}
	var c Command
	var positional []string
	seen := map[string]bool{}
	for _, w := range words {
		key, value, isOption := strings.Cut(w, "=")
		if !isOption {
			positional = append(positional, w)
			continue
		}
		if seen[key] {
			return Command{}, refusef("%s= is given twice", key)
		}
		seen[key] = true
		if err := c.setOption(key, value); err != nil {
			return Command{}, err
		}
	}
	if len(positional) > 2 {
		return Command{}, refusef("too many words (%s): %s", strings.Join(positional, " "), shortGrammar)
	}
	var branches, commit string
	if len(positional) > 0 {
		branches = positional[0]
	}
	if len(positional) > 1 {
		commit = positional[1]
	}
	if branches == "help" {
		return Command{}, refusef("help takes nothing else: /patchproof help")
	}
	if commit == "" && anyHexRE.MatchString(branches) {
		branches, commit = "", branches
	}
	switch {
	case commit == "":
	case commitRE.MatchString(commit):
		c.Commit = commit
	case anyHexRE.MatchString(commit):
		return Command{}, refusef("%s is not a commit: name it in lowercase hex", commit)
	default:
		return Command{}, refusef("%s is not a commit (7 to 40 lowercase hex digits): %s", commit, shortGrammar)
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

// isCommand refuses, as not a trigger, a comment whose first line is not
// a /patchproof command: nobody asked patchproof anything.
func isCommand(body string) error {
	if !commentRE.MatchString(firstLine(body)) {
		return notATrigger("not a patchproof command: the first line must be %s", shortGrammar)
	}
	return nil
}

func firstLine(body string) string {
	first, _, _ := strings.Cut(body, "\n")
	return strings.TrimSuffix(first, "\r")
}

// setOption checks one KEY=VALUE of a comment and records it.
func (c *Command) setOption(key, value string) error {
	if value == "" {
		return refusef("%s= has no value", key)
	}
	switch key {
	case "bench":
		m, err := pipeline.ParseBenchMode(value)
		if err != nil {
			return refusef("bench=%s: %v", value, err)
		}
		c.Bench = string(m)
	case "threads":
		var counts []int
		for _, it := range strings.Split(value, ",") {
			n, err := strconv.Atoi(it)
			switch {
			case err != nil || n < 1:
				return refusef("threads=%s: %q is not a thread count (1 or more)", value, it)
			case n > maxThreads:
				return refusef("threads=%s: %d is more than %d threads", value, n, maxThreads)
			case slices.Contains(counts, n):
				return refusef("threads=%s: %d is listed twice", value, n)
			}
			counts = append(counts, n)
		}
		c.Threads = value
	case "stages":
		items := strings.Split(value, ",")
		if slices.Contains(items, "") {
			return refusef("stages=%s: an empty item", value)
		}
		set, err := pipeline.ParseStageSet(items)
		if err != nil {
			return refusef("stages=%s: %v", value, err)
		}
		if len(set.Names()) == 0 {
			return refusef("stages=%s selects no stage (stages: %s)", value, strings.Join(pipeline.StageNames(), ","))
		}
		// A check needs the trees and the builds: a maintainer names the
		// checks, and the checkout and build stages come with them, in
		// the pipeline's order.
		prerequisites := pipeline.Prerequisites()
		check := slices.ContainsFunc(set.Names(), func(n string) bool { return !slices.Contains(prerequisites, n) })
		var names []string
		for _, n := range pipeline.StageNames() {
			if set.Has(n) || (check && slices.Contains(prerequisites, n)) {
				names = append(names, n)
			}
		}
		c.Stages = strings.Join(names, ",")
	case "merge-up":
		var branches []string
		for _, b := range strings.Split(value, ",") {
			switch {
			case !validBranch(b):
				return refusef("merge-up=%s: %s is not a branch", value, quoteWord(b))
			case slices.Contains(branches, b):
				return refusef("merge-up=%s: %s is listed twice", value, b)
			}
			branches = append(branches, b)
		}
		c.MergeUp = value
	default:
		return refusef("unknown option %s= (bench=, threads=, stages=, merge-up=)", quoteWord(key))
	}
	return nil
}

// quoteWord shows a word of a comment in a refusal: as it is when it is
// plain, quoted otherwise.
func quoteWord(s string) string {
	if branchRE.MatchString(s) {
		return s
	}
	return fmt.Sprintf("%q", s)
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
