// Package childenv owns the environment of the processes patchproof
// starts: the code under test (configure and make of a pull request's tree,
// its php running the test suites, Apache with its module) and the tools
// around it. They get patchproof's environment without what could give
// them a credential or a way out: the CI's tokens and runner variables,
// anything named like a secret, the Docker engine, the SSH agent and
// patchproof's own settings. What a build needs (PATH, HOME, LANG and
// LC_*, TMPDIR, the compiler's and ccache's variables) stays; what the
// caller adds after Clean (CCACHE_DIR, the test database's password) is
// its own to give.
package childenv

import (
	"os"
	"strings"
)

// Environ is Clean of this process's environment: what a child gets.
func Environ() []string { return Clean(os.Environ()) }

// Clean returns environ ("NAME=value" entries) without the entries a child
// must not see: see Drop.
func Clean(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !Drop(name) {
			out = append(out, kv)
		}
	}
	return out
}

// OwnerVar marks every process a patchproof run starts with the run's
// owner, HOST/PID/START of the patchproof process (internal/proc), so that
// what survives it (a process that left its group, or the whole run after
// a kill -9) is found and stopped. It is kept although it is one of
// patchproof's own: it names a process, and gives nothing.
const OwnerVar = "PATCHPROOF_OWNER"

// droppedPrefixes are the families of variables a child never gets: the
// CI's (GitHub Actions' tokens, runner, inputs; the gh CLI's), the Docker
// engine's, which would hand it the host, and patchproof's own.
var droppedPrefixes = []string{"GITHUB_", "GH_", "ACTIONS_", "RUNNER_", "INPUT_", "DOCKER_", "PATCHPROOF_"}

// secretWords mark a variable named like a credential, anywhere in its name.
var secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}

// droppedNames are single variables that open a door: the SSH agent.
var droppedNames = []string{"SSH_AUTH_SOCK", "SSH_AGENT_PID"}

// Drop reports whether the variable name must not reach a child: one of
// droppedPrefixes or droppedNames, a name containing TOKEN, SECRET,
// PASSWORD, PASSWD or CREDENTIAL, or one with a KEY part (API_KEY,
// AWS_ACCESS_KEY_ID), in any case.
func Drop(name string) bool {
	if name == OwnerVar {
		return false
	}
	upper := strings.ToUpper(name)
	for _, p := range droppedPrefixes {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	for _, n := range droppedNames {
		if upper == n {
			return true
		}
	}
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	for _, part := range strings.Split(upper, "_") {
		if part == "KEY" {
			return true
		}
	}
	return false
}
