// Package childenv owns the environment of the processes patchproof
// starts: the code under test (configure and make of a pull request's tree,
// its php running the test suites, Apache with its module), the database
// server, and the tools around them.
//
// It is an allow list. A child gets from patchproof's environment only the
// variables the table allowed names for its Kind, and none whose value
// holds a URL with a user or password in it; everything else is dropped,
// whatever it is called: the CI's tokens, a GPG passphrase, MYSQL_PWD, a
// database URL with its password, the Docker engine's address, the SSH
// agent, patchproof's own settings. A name a deny list would have to guess
// cannot slip through. What the caller adds after the allowed variables
// (CFLAGS, CCACHE_DIR, the suites' variables and the test database's
// password, LD_PRELOAD) is its own to give, and a container's environment
// (Container) takes nothing from patchproof's at all.
package childenv

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Kind is the kind of a child, which decides what it gets. The zero value
// is Tool.
type Kind uint8

const (
	// Tool is a trusted program patchproof runs on its own inputs: gcc
	// --version, git, tar, cp, addr2line, perf, taskset, wrk.
	Tool Kind = iota
	// Build is configure and make of a tree: the code under test.
	Build
	// Database is mariadbd and its install script.
	Database
	// Tests is run-tests.php and the tests it runs: the code under test.
	// It gets no TMPDIR of patchproof's: the suites are given their own.
	Tests
	// WebServer is Apache with a build's mod_php: the code under test.
	WebServer
	// Fetch is a tool that downloads (debootstrap from a Debian mirror):
	// the only kind that gets the proxy variables.
	Fetch
)

func (k Kind) String() string {
	names := [...]string{"tool", "build", "database", "tests", "web server", "fetch"}
	if int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// OwnerVar marks every process a patchproof run starts with the run's
// owner, HOST/PID/START of the patchproof process (internal/proc), so that
// what survives it (a process that left its group, or the whole run after
// a kill -9) is found and stopped. It names a process, and gives nothing.
const OwnerVar = "PATCHPROOF_OWNER"

var (
	everyKind = []Kind{Tool, Build, Database, Tests, WebServer, Fetch}
	network   = []Kind{Fetch}
)

// allowed is every variable a child may get from patchproof's environment,
// and which kinds get it: the one list. A name ending in "*" is a prefix.
// A host that needs more for its builds adds it here, for the kinds that
// need it.
var allowed = []struct {
	name  string
	kinds []Kind
}{
	{"PATH", everyKind},
	{"HOME", everyKind},
	{"USER", everyKind},
	{"LOGNAME", everyKind},
	{"LANG", everyKind},
	{"LC_*", everyKind},
	{"TZ", everyKind},
	{"TMPDIR", []Kind{Tool, Build, Database, WebServer, Fetch}},
	// The Actions runner finds the processes a job left behind by this
	// mark in their environment, and kills them when the job ends.
	{"RUNNER_TRACKING_ID", everyKind},
	{OwnerVar, everyKind},
	{"http_proxy", network},
	{"https_proxy", network},
	{"HTTP_PROXY", network},
	{"HTTPS_PROXY", network},
	{"no_proxy", network},
	{"NO_PROXY", network},
}

// For is Clean of this process's environment: what a child of kind k gets.
func For(k Kind) []string { return Clean(k, os.Environ()) }

// Clean returns the entries of environ ("NAME=value") that a child of kind
// k may get, in their order: those allowed names for k whose value holds
// no URL with a user or password.
func Clean(k Kind, environ []string) []string {
	out := make([]string, 0, len(allowed))
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && Allowed(k, name) && !HasCredentials(value) {
			out = append(out, kv)
		}
	}
	return out
}

// Allowed reports whether the table gives a child of kind k the variable
// name.
func Allowed(k Kind, name string) bool {
	for _, a := range allowed {
		prefix, isPrefix := strings.CutSuffix(a.name, "*")
		if (name == a.name || isPrefix && strings.HasPrefix(name, prefix)) && slices.Contains(a.kinds, k) {
			return true
		}
	}
	return false
}

// HasCredentials reports whether value holds a URL with a user part,
// scheme://user@host or scheme://user:password@host (or, without a
// scheme, user:password@host): a proxy's or a database's account, or a
// token written as a user name.
func HasCredentials(value string) bool {
	if !strings.Contains(value, "://") {
		// A proxy may be written without its scheme: user:password@host.
		authority, _, _ := strings.Cut(value, "/")
		at := strings.LastIndex(authority, "@")
		return at > 0 && strings.Contains(authority[:at], ":")
	}
	for rest := value; ; {
		_, after, ok := strings.Cut(rest, "://")
		if !ok {
			return false
		}
		authority := after
		if i := strings.IndexAny(authority, "/?#"); i >= 0 {
			authority = authority[:i]
		}
		if strings.Contains(authority, "@") {
			return true
		}
		rest = after
	}
}

// Container is the whole environment a container starts with, before the
// caller's own variables: a PATH and a HOME of its own, nothing of
// patchproof's.
func Container() []string {
	return []string{"HOME=/tmp", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
}
