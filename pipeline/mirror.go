package pipeline

import (
	"github.com/patchproof/patchproof/internal/aptsource"
)

// debianMirror is where Debian's packages and source packages come from:
// $PATCHPROOF_DEBIAN_MIRROR, else the mirror the machine's apt uses. ""
// when neither names one: a step that needs it says so when it does.
func (c *Config) debianMirror() string {
	if m := c.Getenv("PATCHPROOF_DEBIAN_MIRROR"); m != "" {
		return m
	}
	m, err := aptsource.Default.Mirror()
	if err != nil {
		return ""
	}
	return m
}
