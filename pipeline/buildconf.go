package pipeline

import (
	"path"
	"strings"
)

// buildSystemChange is the first of a change's paths (slash-separated,
// from the tree root) that is part of php-src's build system, "" when none
// is. A tree that ships configure (a release tarball, the demo's) is
// configured by what its base's buildconf made; a change to one of these
// files needs buildconf run again, on both sides, for base and head to be
// configured alike by their own checks.
func buildSystemChange(changed []string) string {
	for _, p := range changed {
		base := path.Base(p)
		switch {
		case strings.HasSuffix(base, ".m4"), // config.m4, config9.m4, Zend/Zend.m4, build/*.m4
			base == "configure.ac",
			strings.HasPrefix(p, "build/"):
			return p
		}
	}
	return ""
}
