package abi

import (
	"fmt"
	"regexp"
	"strings"
)

// Mode says what an ABI break on a stable branch does to its target.
type Mode string

const (
	// Fail makes a break fail the target; the default.
	Fail Mode = "fail"
	// Warn shows a break as a warning, and the target passes.
	Warn Mode = "warn"
	// Off leaves the check out of the verdict: its findings are shown.
	Off Mode = "off"
)

// Modes lists every mode, in the order --abi's help gives them.
var Modes = []Mode{Fail, Warn, Off}

// ParseMode reads a mode as --abi spells it; "" is the default, Fail.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case "":
		return Fail, nil
	case Fail, Warn, Off:
		return m, nil
	}
	return "", fmt.Errorf("parse ABI mode %q: want fail, warn or off", s)
}

// String is the mode as --abi spells it.
func (m Mode) String() string {
	if m == "" {
		return string(Fail)
	}
	return string(m)
}

// Set makes a *Mode a flag.Value.
func (m *Mode) Set(s string) error {
	v, err := ParseMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

var stableBranch = regexp.MustCompile(`^PHP-[0-9]+\.[0-9]+$`)

// Stable says whether branch is a stable branch of php-src (PHP-8.4, also
// as refs/heads/PHP-8.4), whose ABI must not change; master's may.
func Stable(branch string) bool {
	return stableBranch.MatchString(strings.TrimPrefix(branch, "refs/heads/"))
}
