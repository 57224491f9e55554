// Package version says which patchproof is running: the module version
// and the VCS revision the Go toolchain stamped into the binary, so that a
// report can be traced to the code that wrote it.
package version

import (
	"runtime/debug"
	"strings"
)

// String is the running binary's version: "v1.2.3", or "(devel)" for a
// build from a work tree, followed by the revision's first 12 hex digits
// and "+dirty" when the tree had changes. Test binaries and builds without
// VCS stamping give the module version alone.
func String() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return format(info)
}

func format(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	var b strings.Builder
	b.WriteString(v)
	b.WriteString(" ")
	b.WriteString(rev)
	if dirty {
		b.WriteString("+dirty")
	}
	return b.String()
}
