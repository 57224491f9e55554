package builders

// What a build is asked for (Spec) and what it made (Build), and the
// cache key that decides whether it is made again.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/patchproof/patchproof/internal/side"
)

// Spec is what to build.
type Spec struct {
	Label    string    // e.g. "PHP-8.2 base/nts", for logs
	Side     side.Side // recorded, not used to build
	Source   string    // the source tree (it is copied, never written)
	TreeHash string    // the git tree hash of Source: its identity
	Variant  Variant
	Profile  Profile
	Jobs     int       // make -j
	Log      io.Writer // the build log, streamed
	// Objects, when set, is given the number of objects the generated
	// Makefile compiles, after configure and before make: the total for a
	// progress display. A cached build runs neither and never calls it.
	Objects func(total int)
	// Trusted says the tree is the upstream repository's (a base, also of
	// a backport target), not a pull request's (a head): only a trusted
	// build writes the shared ccache. The zero value is the safe one.
	Trusted bool
	// Buildconf runs ./buildconf --force before configure although the
	// tree ships one: the change touches the build system (a config.m4,
	// configure.ac, build/), so a shipped configure is base's, not the
	// tree's. A tree without configure runs buildconf whatever this says.
	Buildconf bool
	// From, when set, is a finished build this one is derived from (see
	// derive): a head's base in the same variant, with Changed the paths
	// where Source differs from it; or, for a TSan build, the same tree's
	// ZTS build, with Instrument what is compiled with the sanitizer
	// (TSanInstrument).
	From       *Build
	Changed    []string
	Instrument []string
}

// Build is a finished (or failed) build. It is part of results.json.
type Build struct {
	Label         string         `json:"label"`
	Side          side.Side      `json:"side"`
	Variant       Variant        `json:"variant"`
	Profile       Profile        `json:"profile"`
	Executor      string         `json:"executor"`
	TreeHash      string         `json:"tree_hash"`
	Key           string         `json:"cache_key"`
	OK            bool           `json:"ok"`
	Cached        bool           `json:"cached"`
	Dir           string         `json:"dir"`
	PHP           string         `json:"php,omitempty"`
	Module        string         `json:"module,omitempty"` // libs/libphp.so for Apache
	ConfigureLine string         `json:"configure_line"`
	Compiler      string         `json:"compiler"`
	PHPVersion    string         `json:"php_version,omitempty"` // php -v, first line
	PHPModules    []string       `json:"php_modules,omitempty"` // php -m
	DurationMS    int64          `json:"duration_ms"`
	ConfigLog     string         `json:"config_log,omitempty"`
	BuildLog      string         `json:"build_log,omitempty"`
	Errors        []CompileError `json:"errors,omitempty"`
	Failure       string         `json:"failure,omitempty"`
	// Digests are the SHA-256 of what the build produced ("sha256:HEX"),
	// by path in Dir: sapi/cli/php, libs/libphp.so when built, and
	// patchproof-files.json, the digests of every file a later stage
	// reads (object files, modules, the tests). A cached entry is used only
	// while they all match.
	Digests map[string]string `json:"digests,omitempty"`
	// Warnings say why this build was made although the cache held an
	// entry for it.
	Warnings []string `json:"warnings,omitempty"`
	// Buildconf says ./buildconf --force made configure although the tree
	// shipped one (Spec.Buildconf).
	Buildconf bool `json:"buildconf,omitempty"`
	// DerivedFrom is the cache key of the build this one was made from,
	// by make alone (Spec.From); Instrumented, for a derived TSan build,
	// what it compiled with the sanitizer.
	DerivedFrom  string   `json:"derived_from,omitempty"`
	Instrumented []string `json:"instrumented,omitempty"`
}

// CompileError is one compiler error, with its place in the source tree.
type CompileError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
}

// ErrBuildFailed is wrapped by the error of a build whose commands ran and
// failed (configure, make, or a wrong result): a finding about the tree, not
// an infrastructure failure.
var ErrBuildFailed = errors.New("build failed")

// Key is the build cache key: everything that decides a build's output.
func (b *Builder) Key(ctx context.Context, s Spec) (string, []string, error) {
	args, err := ConfigureArgs(s.Profile, s.Variant, b.apxsFor(s.Variant))
	if err != nil {
		return "", nil, err
	}
	id, err := b.Exec.ID(ctx)
	if err != nil {
		return "", nil, err
	}
	h := sha256.New()
	if s.derivedTSan() {
		// Not what a fresh TSan build makes: the ZTS build's code, but for
		// what it instruments.
		fmt.Fprintf(h, "patchproof derived tsan v1\nfrom %s\ninstrument %q\nflags %q\nexecutor %s\n",
			s.From.Key, s.Instrument, TSanFlags, id)
		return hex.EncodeToString(h.Sum(nil))[:24], args, nil
	}
	fmt.Fprintf(h, "patchproof build v1\ntree %s\nvariant %s\nprofile %s\nflags %q\nconfigure %q\nexecutor %s\n",
		s.TreeHash, s.Variant, s.Profile, Env(s.Variant), args, id)
	if s.Buildconf {
		// Only when set, so that the keys of the builds made before it
		// existed stay what they were.
		fmt.Fprintf(h, "buildconf forced\n")
	}
	return hex.EncodeToString(h.Sum(nil))[:24], args, nil
}

// derivedTSan says s is a TSan build made from a ZTS build's tree.
func (s Spec) derivedTSan() bool {
	return s.From != nil && s.Variant == TSan && s.From.Variant == ZTS
}

// derivable checks that s.From can be what s is derived from.
func (s Spec) derivable() error {
	f := s.From
	switch {
	case !f.OK || f.Dir == "":
		return fmt.Errorf("derive from %s: not a finished build", f.Label)
	case f.Profile != s.Profile:
		return fmt.Errorf("derive from %s: profile %s, not %s", f.Label, f.Profile, s.Profile)
	case s.derivedTSan():
		if len(s.Instrument) == 0 {
			return fmt.Errorf("derive from %s: nothing to instrument", f.Label)
		}
		if f.TreeHash != s.TreeHash {
			return fmt.Errorf("derive from %s: a TSan build is made from its own tree's ZTS build", f.Label)
		}
	case f.Variant != s.Variant:
		return fmt.Errorf("derive from %s: variant %s, not %s", f.Label, f.Variant, s.Variant)
	case s.Buildconf || f.Buildconf:
		return fmt.Errorf("derive from %s: the change touches the build system", f.Label)
	}
	return nil
}
