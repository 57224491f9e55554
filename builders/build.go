// Package builders turns a php-src tree and a variant into a Build: the php
// CLI, the unstripped object files the machine-code diff reads, the server
// module the benchmark loads, and the logs. Builds use the official Docker
// image's compiler flags, run through an Executor (this host, or a Docker
// container), and are cached by what determines their output. A cache entry
// records the digests of every file a later stage reads from it (the php
// and module, the object files, the tests) and is verified before it is
// used (a rejected entry is rebuilt, with a warning); a finished entry is
// read-only. A pull request's build (an untrusted Spec) reads the shared
// ccache and never writes it: see ccacheSetup.
package builders

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/safefs"
)

// Builder builds specs through an executor into a cache.
type Builder struct {
	Exec     Executor
	CacheDir string // builds land in CacheDir/builds/KEY, ccache in CacheDir/ccache
	Apxs     string // apxs2 for ZTS builds of the Apache module; "" for none
	CCache   bool   // compile through ccache
	// CCacheMaxSize is the size in bytes trusted builds keep the shared
	// ccache under; 0 means DefaultCCacheMaxSize.
	CCacheMaxSize int64
	// CacheMax is the size in bytes the finished builds are kept under,
	// pruned after each build lands; 0 means DefaultCacheMax of the cache
	// directory, negative no limit.
	CacheMax int64

	mu   sync.Mutex
	used []string // the keys Build has returned: this run reads them
	// held are the shared locks on those entries, until Release: another
	// run's prune cannot take their locks, so it leaves them.
	held []*cachedir.Held
}

func (b *Builder) apxsFor(v Variant) string {
	if v.Serves() {
		return b.Apxs
	}
	return ""
}

// Cached reports whether s is in the cache already, without waiting for a
// build of it that is under way.
func (b *Builder) Cached(ctx context.Context, s Spec) bool {
	key, _, err := b.Key(ctx, s)
	if err != nil {
		return false
	}
	_, err = readBuild(filepath.Join(b.CacheDir, "builds", key))
	return err == nil
}

// Build returns the cached build of s, or builds it. A build whose commands
// fail returns a Build with OK false and an error wrapping ErrBuildFailed;
// any other error means it could not be attempted.
func (b *Builder) Build(ctx context.Context, s Spec) (*Build, error) {
	if s.Log == nil {
		s.Log = io.Discard
	}
	if s.TreeHash == "" {
		return nil, fmt.Errorf("build %s: no tree hash", s.Label)
	}
	if s.From != nil {
		if err := s.derivable(); err != nil {
			return nil, fmt.Errorf("build %s: %w", s.Label, err)
		}
	}
	key, args, err := b.Key(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	root := filepath.Join(b.CacheDir, "builds")
	dir := filepath.Join(root, key)
	// A finished entry is read under a shared lock, which the run keeps
	// (use): no prune removes it and no writer replaces it while this
	// run's later stages read it. Only what must change the entry (make
	// it, upgrade it, reject it) takes the lock exclusively.
	lock, shared, err := cachedir.ReadOrLockContext(ctx, dir+lockSuffix, s.Log, func() bool { return exists(dir) })
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	if shared {
		cached, err := readBuild(dir)
		if err == nil {
			return b.reuse(s, root, key, dir, cached, lock), nil
		}
		lock.Release()
		if b.uses(key) {
			// Its own shared lock would keep this run waiting for itself.
			return nil, fmt.Errorf("build %s: cached build %s changed while this run used it: %w", s.Label, key, err)
		}
		// Rejected, or to be upgraded: a writer's, once its readers are done.
		if lock, err = cachedir.LockHeld(ctx, dir+lockSuffix, s.Log); err != nil {
			return nil, fmt.Errorf("build %s: %w", s.Label, err)
		}
	}
	kept := false
	defer func() {
		if !kept {
			lock.Release()
		}
	}()
	var warnings []string
	cached, err := readBuild(dir)
	if errors.Is(err, errNoFiles) {
		// Made by a patchproof from before the files' digests: record
		// them now, once, rather than build it again.
		// readBuild checked php's and the module's digests already, and
		// the files' digests are made from what is there now.
		if err = upgradeEntry(dir, cached); err == nil {
			fmt.Fprintf(s.Log, "cached build %s: recorded the digests of its files\n", key)
		}
	}
	switch {
	case err == nil:
		if err := share(lock, dir); err != nil {
			return nil, fmt.Errorf("build %s: %w", s.Label, err)
		}
		kept = true
		return b.reuse(s, root, key, dir, cached, lock), nil
	case !errors.Is(err, errNoEntry):
		// Tampered with, damaged, or written by an older patchproof: the
		// entry is not used, and it is in the way of the new one.
		w := fmt.Sprintf("cached build %s rejected, rebuilding: %v", key, err)
		fmt.Fprintf(s.Log, "warning: %s\n", w)
		warnings = append(warnings, w)
		if err := removeEntry(dir); err != nil {
			return nil, fmt.Errorf("build %s: remove the rejected cache entry: %w", s.Label, err)
		}
	}

	res, err := b.make(ctx, s, key, args, warnings, lock)
	kept = err == nil
	return res, err
}

// make builds s afresh into the entry key of the builds dir, whose lock
// the caller holds exclusively: configure (or a derivation from s.From),
// make, and the checks and records of finish. warnings are the lookup's.
func (b *Builder) make(ctx context.Context, s Spec, key string, args, warnings []string, lock *cachedir.Held) (*Build, error) {
	root := filepath.Join(b.CacheDir, "builds")
	dir := filepath.Join(root, key)
	if err := removeDeadBuilds(root, key, s.Log); err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	start := time.Now()
	tmp, err := os.MkdirTemp(root, key+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	defer os.RemoveAll(tmp)
	res := &Build{
		Label: s.Label, Side: s.Side, Variant: s.Variant, Profile: s.Profile, Executor: b.Exec.String(),
		TreeHash: s.TreeHash, Key: key, ConfigureLine: ConfigureLine(s.Variant, args),
		Warnings: warnings, Buildconf: s.Buildconf,
	}
	if s.From != nil {
		res.DerivedFrom = s.From.Key
		res.ConfigureLine = s.From.ConfigureLine
		if s.derivedTSan() {
			res.Instrumented = s.Instrument
		}
	}
	res.Compiler, _ = b.Exec.ID(ctx)
	fail := func(step string, runErr error) (*Build, error) {
		res.DurationMS = time.Since(start).Milliseconds()
		res.Failure = step + ": " + runErr.Error()
		return res, fmt.Errorf("build %s: %s: %w", s.Label, res.Failure, ErrBuildFailed)
	}

	if err := fillTree(ctx, s, tmp); err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	env, mounts, pruneShared, err := b.buildEnv(s, tmp)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	defer pruneShared()
	// The tree was copied into tmp: its patchproof-build.log may be a link.
	logFile, err := safefs.Create(tmp, buildLogName, 0o644)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	defer logFile.Close()
	log := &errorScanner{w: io.MultiWriter(logFile, s.Log), root: tmp}
	run := func(step string, argv ...string) (runErr, execErr error) {
		fmt.Fprintf(s.Log, "\n### %s: %s\n", step, strings.Join(argv, " "))
		return b.Exec.Exec(ctx, Cmd{Dir: tmp, Args: argv, Env: env, Output: log, Mounts: mounts})
	}
	makeArgs := []string{"make", "-j" + strconv.Itoa(max(1, s.Jobs))}
	if s.derivedTSan() {
		// The Makefile's compile and link rules take EXTRA_CFLAGS: the
		// objects made again are instrumented, and php and the module are
		// linked with the sanitizer's runtime.
		makeArgs = append(makeArgs, "EXTRA_CFLAGS="+TSanFlags)
	}
	res.ConfigLog = filepath.Join(dir, "config.log")
	if s.From == nil {
		if failed, err := b.configure(ctx, s, tmp, args, run); err != nil || failed != nil {
			if err != nil {
				return nil, fmt.Errorf("build %s: %w", s.Label, err)
			}
			return fail(failed.step, failed.err)
		}
	}
	shim, err := installShim(tmp)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	if shim != "" {
		fmt.Fprintf(s.Log, "### libtool: compiles through patchproof's shim (%s)\n", shimName)
		makeArgs = append(makeArgs, shim)
	}
	runErr, execErr := run("make", makeArgs...)
	if execErr != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, execErr)
	}
	if runErr != nil {
		res.Errors = log.errors
		return fail("make", runErr)
	}
	// make could have put a link or another file at the log's name (a
	// rename over it): the entry keeps only patchproof's own log there.
	if err := safefs.Holds(tmp, buildLogName, logFile); err != nil {
		return fail("record", err)
	}
	return b.finish(ctx, s, res, tmp, dir, root, key, start, fail, lock)
}

// fillTree puts what s builds from into tmp: the build s derives from, or
// its source tree.
func fillTree(ctx context.Context, s Spec, tmp string) error {
	if s.From != nil {
		// The entry is not pruned or replaced while it is copied: a
		// shared lock, as this run holds it already since it made or
		// reused it (an exclusive one would wait for this run itself).
		unlockFrom, err := cachedir.SharedLockContext(ctx, s.From.Dir+lockSuffix, s.Log)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.Log, "### derive: from %s (%s)\n", s.From.Key, s.From.Label)
		err = derive(s, tmp)
		unlockFrom()
		if err != nil {
			return fmt.Errorf("derive from %s: %w", s.From.Label, err)
		}
		return nil
	}
	if err := copyTree(s.Source, tmp); err != nil {
		return fmt.Errorf("copy source: %w", err)
	}
	return nil
}

// buildEnv is the environment and the mounts of a build's commands in
// tmp, and what to do once the build is done (prune the shared ccache a
// trusted build wrote).
func (b *Builder) buildEnv(s Spec, tmp string) (env []string, mounts []Mount, done func(), err error) {
	// LC_ALL=C: compiler messages in plain ASCII, the same on every machine.
	// The locale variables and PHP_UNAME are set whatever this host has, so
	// that a build on this host and one in a container configure and
	// compile alike, byte for byte, and share their ccache entries: ccache
	// hashes the locale, and configure puts uname -a, host name included,
	// into php_config.h, which every file includes.
	env = append([]string{"LC_ALL=C", "LANG=C", "LC_CTYPE=C", "LC_MESSAGES=C", "PHP_UNAME=" + unameForBuild()}, Env(s.Variant)...)
	done = func() {}
	if !b.CCache {
		return env, nil, done, nil
	}
	shared := filepath.Join(b.CacheDir, ccacheDir)
	ccEnv, ccMounts, err := ccacheSetup(shared, tmp, s.Trusted)
	if err != nil {
		return nil, nil, nil, err
	}
	// A container's bind of a missing directory would make it, as root.
	if err := os.MkdirAll(shared, 0o755); err != nil {
		return nil, nil, nil, err
	}
	if s.Trusted {
		done = func() {
			if err := pruneCCache(shared, cmp.Or(b.CCacheMaxSize, DefaultCCacheMaxSize)); err != nil {
				fmt.Fprintf(s.Log, "warning: %v\n", err)
			}
		}
	}
	return append(env, ccEnv...), ccMounts, done, nil
}

// stepFailure is a build step whose command ran and failed.
type stepFailure struct {
	step string
	err  error
}

// configure runs buildconf where needed, then configure, in tmp. A step
// that ran and failed is returned as a stepFailure; an error means one
// could not run.
func (b *Builder) configure(ctx context.Context, s Spec, tmp string, args []string, run func(string, ...string) (error, error)) (*stepFailure, error) {
	if _, err := os.Stat(filepath.Join(tmp, "configure")); err != nil || s.Buildconf {
		if runErr, execErr := run("buildconf", "./buildconf", "--force"); execErr != nil {
			return nil, execErr
		} else if runErr != nil {
			return &stepFailure{"buildconf", runErr}, nil
		}
	}
	runErr, execErr := run("configure", append([]string{"./configure"}, args...)...)
	if execErr != nil {
		return nil, execErr
	}
	if runErr != nil {
		return &stepFailure{"configure", runErr}, nil
	}
	if s.Objects != nil {
		// Only progress: a Makefile it cannot read is make's to report.
		if n, err := countObjects(filepath.Join(tmp, "Makefile")); err == nil {
			s.Objects(n)
		}
	}
	return nil, nil
}

// finish checks the build made in tmp is what was asked for, records its
// digests and lands it in the cache as dir.
func (b *Builder) finish(ctx context.Context, s Spec, res *Build, tmp, dir, root, key string, start time.Time, fail func(string, error) (*Build, error), lock *cachedir.Held) (*Build, error) {
	// The result must be what was asked for.
	php := filepath.Join(tmp, "sapi/cli/php")
	var out bytes.Buffer
	if runErr, execErr := b.Exec.Exec(ctx, Cmd{Dir: tmp, Args: []string{php, "-n", "-v"}, Output: &out}); execErr != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, execErr)
	} else if runErr != nil {
		// What php said before it died is the reason (a sanitizer's, say).
		return fail("php -v", fmt.Errorf("%w: %s", runErr, tail(out.String(), 2000)))
	}
	res.PHPVersion, _, _ = strings.Cut(out.String(), "\n")
	if want := s.Variant.VersionMark(); !strings.Contains(res.PHPVersion, want) {
		return fail("php -v", fmt.Errorf("%q is not %s", res.PHPVersion, want))
	}
	out.Reset()
	if runErr, execErr := b.Exec.Exec(ctx, Cmd{Dir: tmp, Args: []string{php, "-n", "-m"}, Output: &out}); execErr != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, execErr)
	} else if runErr != nil {
		return fail("php -m", runErr)
	}
	res.PHPModules = parseModules(out.String())
	for _, m := range []string{"mysqlnd", "mysqli", "PDO", "pdo_mysql"} {
		if !slices.Contains(res.PHPModules, m) {
			return fail("php -m", fmt.Errorf("module %s missing", m))
		}
	}

	// The build's own ccache is no part of it: an untrusted build's is what
	// no other build may read. It may have made it unwritable.
	if err := removeEntry(filepath.Join(tmp, ownCCacheDir)); err != nil {
		return nil, fmt.Errorf("build %s: remove its own ccache: %w", s.Label, err)
	}
	res.Dir = dir
	res.PHP = filepath.Join(dir, phpPath)
	produced := []string{phpPath}
	if fileExists(filepath.Join(tmp, modulePath)) {
		res.Module = filepath.Join(dir, modulePath)
		produced = append(produced, modulePath)
	}
	var err error
	if res.Digests, err = digests(tmp, produced); err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	files, err := recordFiles(tmp)
	if err != nil {
		// Such as a symlink among the objects: the tree's doing.
		return fail("record digests", err)
	}
	res.Digests[filesFile] = files
	res.BuildLog = filepath.Join(dir, buildLogName)
	res.DurationMS = time.Since(start).Milliseconds()
	// Only now, every step done and recorded: a build that failed at any
	// step above is no build, in its record or in the report.
	res.OK = true
	if err := writeBuild(tmp, res); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	if err := makeReadOnly(dir); err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	if err := share(lock, dir); err != nil {
		return nil, fmt.Errorf("build %s: %w", s.Label, err)
	}
	b.use(root, key, lock)
	b.prune(s.Log)
	return res, nil
}

const (
	buildFile = "patchproof-build.json"
	// buildLogName is the build's output, kept in its entry.
	buildLogName = "patchproof-build.log"
	phpPath      = "sapi/cli/php"   // in a build's directory
	modulePath   = "libs/libphp.so" // in a build's directory
)

func parseModules(out string) []string {
	var mods []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "[") {
			continue
		}
		mods = append(mods, l)
	}
	return mods
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// copyTree copies a source tree with cp -a, which keeps modes, times and
// symlinks (configure and make compare timestamps).
func copyTree(src, dst string) error {
	cmd := exec.Command("cp", "-a", src+"/.", dst)
	cmd.Env = childenv.For(childenv.Tool)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp -a %s %s: %v: %s", src, dst, err, bytes.TrimSpace(out))
	}
	return nil
}

// tail returns the last n bytes of s, trimmed.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// unameForBuild is what a build's php -i reports as its system: the
// kernel's name, release and machine, without the host's name, which
// differs between this host and a container.
func unameForBuild() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "Linux"
	}
	str := func(b [65]int8) string {
		var out []byte
		for _, c := range b {
			if c == 0 {
				break
			}
			out = append(out, byte(c))
		}
		return string(out)
	}
	return str(u.Sysname) + " " + str(u.Release) + " " + str(u.Machine)
}
