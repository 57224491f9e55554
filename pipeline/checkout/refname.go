package checkout

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotARefName is what CheckRefName's errors are (errors.Is).
var ErrNotARefName = errors.New("not a ref name")

// CheckRefName rejects a ref that is not a name git would give a branch,
// tag or ref (git check-ref-format, one level allowed): patterns ("*",
// "?", "["), revisions ("~", "^", "@{", ".."), refspecs (":"), spaces and
// control characters, a leading "-", a component that begins with "." or
// ends in ".lock", an empty component, a trailing "/" or ".". A pattern
// handed to a fetch would bring every matching branch into the mirror;
// the plan checks each ref with this before anything is fetched. A commit
// hash is a name here.
func CheckRefName(ref string) error {
	why := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrNotARefName, fmt.Sprintf(format, a...))
	}
	switch {
	case ref == "":
		return why("empty")
	case ref == "@":
		return why(`"@" alone`)
	case strings.HasPrefix(ref, "-"):
		return why("it begins with '-'")
	case strings.HasSuffix(ref, "/"), strings.HasSuffix(ref, "."):
		return why("it ends with %q", ref[len(ref)-1:])
	case strings.Contains(ref, ".."):
		return why("it contains '..' (a range)")
	case strings.Contains(ref, "@{"):
		return why("it contains '@{' (a reflog)")
	}
	for _, r := range ref {
		switch {
		case r < 0x20 || r == 0x7f:
			return why("it contains a control character")
		case strings.ContainsRune("*?[", r):
			return why("it contains %q (a pattern): give a branch, tag or commit", r)
		case strings.ContainsRune(" ~^:\\", r):
			return why("it contains %q", r)
		}
	}
	for _, part := range strings.Split(ref, "/") {
		switch {
		case part == "":
			return why("it has an empty component ('//')")
		case strings.HasPrefix(part, "."):
			return why("a component begins with '.'")
		case strings.HasSuffix(part, ".lock"):
			return why("a component ends with '.lock'")
		}
	}
	return nil
}
