// Package checkout gets php-src commits onto disk with go-git.
//
// A remote URL is fetched into one reusable bare mirror per remote under the
// cache directory, fetching only the refs a run needs (a branch, a tag,
// refs/pull/N/head). A local repository path is used in place: it is its own
// mirror. A commit is exported as a plain tree (no .git) into the run
// directory. New mirrors land by rename, and creating or fetching into a
// mirror holds an exclusive lock on it, so concurrent runs and killed runs
// leave the cache consistent; Limits bound how long a fetch holds it and
// how much an export writes. Reading waits for no fetch: a fetch adds
// objects as whole packfiles by rename and only moves refs forward, so a
// run that reads while another fetches sees the objects it resolved. The
// one thing that deletes is a mirror's maintenance (maintain.go), which a
// run does after its fetch only while no other run has the mirror open:
// an open mirror holds a shared lock until Close.
package checkout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/patchproof/patchproof/internal/cachedir"
)

// ErrNotFound is wrapped by errors about a ref, PR, path or remote that does
// not exist.
var ErrNotFound = errors.New("not found")

// ErrNotPHPSrc is wrapped when a commit's tree is not a php-src tree.
var ErrNotPHPSrc = errors.New("not a php-src tree (no main/php_version.h or ext/mysqlnd)")

// Repo is a repository opened for one run: a mirror of a remote, or a local
// repository. While open, a mirror holds a shared lock that only keeps its
// maintenance off: other runs fetch into it and read it meanwhile.
type Repo struct {
	Remote string // as given: URL or path
	Path   string // the repository on disk
	Mirror bool   // Path is a mirror in the cache

	repo    *git.Repository
	limits  Limits // of its exports
	release func() // the mirror's readers lock; nil for a local repository
	closed  sync.Once
}

// Options say how Open fetches and what the Repo's exports may write. The
// zero value works, but for CacheDir when the remote is a URL.
type Options struct {
	CacheDir string // holds the mirrors
	// Refs are the names to fetch as the user gives them: a branch
	// ("PHP-8.4"), a tag, "pull/123/head" or a full "refs/..." name.
	Refs   []string
	Log    io.Writer // progress of a fetch; nil discards it
	Limits Limits
}

// Open opens remote for reading, fetching opt.Refs into its mirror first
// when remote is a URL.
func Open(ctx context.Context, remote string, opt Options) (*Repo, error) {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	opt.Limits = opt.Limits.withDefaults()
	var r *Repo
	var err error
	if isURL(remote) {
		r, err = openMirror(ctx, remote, opt)
	} else {
		r, err = openLocal(remote)
	}
	if err != nil {
		return nil, err
	}
	r.limits = opt.Limits
	return r, nil
}

// LocalPath is the directory of a repository given as a path or a file://
// URL, and false for a remote one.
func LocalPath(remote string) (string, bool) {
	if p, ok := strings.CutPrefix(remote, "file://"); ok {
		return p, p != ""
	}
	if isURL(remote) || remote == "" {
		return "", false
	}
	return remote, true
}

func isURL(s string) bool {
	if strings.HasPrefix(s, "git@") {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && u.Host != "" || strings.HasPrefix(s, "file://")
}

func openLocal(path string) (*Repo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("open repository %s: %w", path, ErrNotFound)
	}
	// A local repository is only read, never written: it needs no lock.
	r, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("open repository %s: not a git repository: %w", path, ErrNotFound)
	}
	return &Repo{Remote: path, Path: abs, repo: r}, nil
}

// Close ends the run's use of the repository: it lets a mirror be
// maintained again. It may be called more than once.
func (r *Repo) Close() error {
	r.closed.Do(func() {
		if r.release != nil {
			r.release()
		}
	})
	return nil
}

// Git returns the underlying go-git repository.
func (r *Repo) Git() *git.Repository { return r.repo }

// Resolve returns the commit a ref names. Branch names are tried before tags,
// then "refs/<ref>", then a full or abbreviated commit hash.
func (r *Repo) Resolve(ref string) (plumbing.Hash, error) {
	for _, name := range candidates(ref) {
		if h, err := r.repo.ResolveRevision(plumbing.Revision(name)); err == nil {
			if c, err := r.repo.CommitObject(*h); err == nil {
				return c.Hash, nil
			}
			// An annotated tag: peel it.
			if t, err := r.repo.TagObject(*h); err == nil {
				if c, err := t.Commit(); err == nil {
					return c.Hash, nil
				}
			}
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("resolve %s in %s: %w", ref, r.Remote, ErrNotFound)
}

func candidates(ref string) []string {
	if strings.HasPrefix(ref, "refs/") {
		return []string{ref}
	}
	return []string{"refs/heads/" + ref, "refs/remotes/origin/" + ref, "refs/tags/" + ref, "refs/" + ref, ref}
}

// MergeBase returns the best common ancestor of a and b.
func (r *Repo) MergeBase(a, b plumbing.Hash) (plumbing.Hash, error) {
	ca, err := r.repo.CommitObject(a)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge-base: commit %s: %w", a, err)
	}
	cb, err := r.repo.CommitObject(b)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge-base: commit %s: %w", b, err)
	}
	bases, err := ca.MergeBase(cb)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge-base of %s and %s: %w", a, b, err)
	}
	if len(bases) == 0 {
		return plumbing.ZeroHash, fmt.Errorf("merge-base of %s and %s: no common ancestor", short(a), short(b))
	}
	return bases[0].Hash, nil
}

// Commit returns a commit object.
func (r *Repo) Commit(h plumbing.Hash) (*object.Commit, error) { return r.repo.CommitObject(h) }

// TreeHash returns the hash of a commit's root tree: the identity of the
// source a build compiles.
func (r *Repo) TreeHash(commit plumbing.Hash) (plumbing.Hash, error) {
	c, err := r.repo.CommitObject(commit)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: %w", commit, err)
	}
	return c.TreeHash, nil
}

// CheckPHPSrc tells whether commit's tree looks like php-src.
func (r *Repo) CheckPHPSrc(commit plumbing.Hash) error {
	c, err := r.repo.CommitObject(commit)
	if err != nil {
		return fmt.Errorf("commit %s: %w", commit, err)
	}
	t, err := c.Tree()
	if err != nil {
		return fmt.Errorf("tree of %s: %w", short(commit), err)
	}
	if _, err := t.File("main/php_version.h"); err != nil {
		return fmt.Errorf("commit %s of %s: %w", short(commit), r.Remote, ErrNotPHPSrc)
	}
	if _, err := t.Tree("ext/mysqlnd"); err != nil {
		return fmt.Errorf("commit %s of %s: %w", short(commit), r.Remote, ErrNotPHPSrc)
	}
	return nil
}

func short(h plumbing.Hash) string { return h.String()[:12] }

// --- mirrors -----------------------------------------------------------------

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// MirrorPath is where a remote's mirror lives under cacheDir.
func MirrorPath(cacheDir, remote string) string {
	name := strings.TrimSuffix(remote, ".git")
	if u, err := url.Parse(name); err == nil && u.Host != "" {
		name = u.Host + u.Path
	}
	name = strings.Trim(unsafeName.ReplaceAllString(name, "_"), "_")
	return filepath.Join(cacheDir, "mirrors", name+".git")
}

func openMirror(ctx context.Context, remote string, opt Options) (*Repo, error) {
	path := MirrorPath(opt.CacheDir, remote)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cache dir %s: %w", opt.CacheDir, err)
	}
	log := opt.Log
	unlock, err := cachedir.LockContext(ctx, path+".lock", log)
	if err != nil {
		return nil, fmt.Errorf("lock mirror %s: %w", path, err)
	}
	defer unlock()
	// Only a holder of this lock creates or fetches into the mirror, so
	// whatever temporary files we find now belong to a run that died.
	if err := removeLeftovers(path); err != nil {
		return nil, err
	}
	r, err := git.PlainOpen(path)
	if err != nil {
		// Missing, or left half-made by a killed run before its rename:
		// build it afresh beside, then rename into place.
		fmt.Fprintf(log, "creating mirror of %s in %s\n", remote, path)
		r, err = createMirror(ctx, path, remote, opt)
		if err != nil {
			return nil, err
		}
	} else if err := fetch(ctx, r, path, remote, opt); err != nil {
		// A fetch cut short leaves go-git's temporary pack behind: the
		// mirror keeps only what whole fetches brought (refs move only
		// after their objects are stored).
		if rerr := removeLeftovers(path); rerr != nil {
			return nil, fmt.Errorf("%w (and %v)", err, rerr)
		}
		return nil, err
	}
	// The mirror as fetched serves the run whatever the maintenance's
	// fate: it deletes nothing reachable, and cut short it leaves only
	// what removeLeftovers deletes.
	if err := maintainMirror(ctx, r, path, opt.Refs, log); err != nil {
		fmt.Fprintf(log, "maintain mirror %s: %v; using it as fetched\n", path, err)
	}
	// A try that failed before one that succeeded, or a maintenance cut
	// short, left its temporary pack.
	if err := removeLeftovers(path); err != nil {
		return nil, err
	}
	// The maintenance may have replaced the packs whose indexes r holds.
	if r, err = git.PlainOpen(path); err != nil {
		return nil, fmt.Errorf("open mirror %s: %w", path, err)
	}
	// Taken before the mirror's lock is let go, so that no maintenance
	// comes between the fetch and the run's reads.
	release, err := cachedir.SharedLockContext(ctx, readersLock(path), log)
	if err != nil {
		return nil, fmt.Errorf("lock mirror %s for reading: %w", path, err)
	}
	return &Repo{Remote: remote, Path: path, Mirror: true, repo: r, release: release}, nil
}

// removeLeftovers deletes what a killed creator, fetcher or maintainer of
// the mirror at path left: half-made mirrors (path.tmp-*, from
// createMirror), go-git's unfinished files (objects/pack/tmp_pack_* and
// tmp_obj_*, ._packed-refs*) and a pack's .idx without its .pack (go-git
// writes a new pack's index in place before it renames the pack there, and
// deletes an old pack before its index; it would take a torn index as
// whole if the same pack came again). The caller holds the mirror's lock,
// without which no pack is written or deleted.
func removeLeftovers(path string) error {
	var matches []string
	for _, pattern := range []string{
		path + ".tmp-*",
		filepath.Join(path, "objects", "pack", "tmp_pack_*"),
		filepath.Join(path, "objects", "pack", "tmp_obj_*"),
		filepath.Join(path, "._packed-refs*"),
		filepath.Join(path, "objects", "pack", "pack-*.idx"),
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			return fmt.Errorf("find leftovers of %s: %w", path, err)
		}
		matches = append(matches, m...)
	}
	for _, m := range matches {
		if idx, ok := strings.CutSuffix(m, ".idx"); ok {
			if _, err := os.Stat(idx + ".pack"); !os.IsNotExist(err) {
				continue
			}
		}
		if err := os.RemoveAll(m); err != nil {
			return fmt.Errorf("remove leftover %s: %w", m, err)
		}
	}
	return nil
}

func createMirror(ctx context.Context, path, remote string, opt Options) (*git.Repository, error) {
	if err := os.RemoveAll(path); err != nil {
		return nil, fmt.Errorf("remove broken mirror %s: %w", path, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), filepath.Base(path)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("create mirror: %w", err)
	}
	defer os.RemoveAll(tmp)
	r, err := git.PlainInit(tmp, true)
	if err != nil {
		return nil, fmt.Errorf("create mirror: %w", err)
	}
	if _, err := r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{remote}}); err != nil {
		return nil, fmt.Errorf("create mirror: %w", err)
	}
	if err := fetch(ctx, r, tmp, remote, opt); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("create mirror: %w", err)
	}
	return git.PlainOpen(path)
}

// fetch brings opt.Refs into the mirror r at dir, each to the same name:
// refs/heads/X for a branch, refs/tags/X, refs/pull/N/head. A name that is
// neither is tried as a branch, then as a tag. All of it must be done within
// opt.Limits.FetchTotal, and each try receive something every
// opt.Limits.FetchIdle: the caller holds the mirror's lock, which every
// other run of this remote waits for.
func fetch(ctx context.Context, r *git.Repository, dir, remote string, opt Options) error {
	lim, log := opt.Limits, opt.Log
	ctx, cancel := context.WithTimeoutCause(ctx, lim.FetchTotal, &FetchTimeoutError{Remote: remote, Limit: lim.FetchTotal})
	defer cancel()
	for _, ref := range opt.Refs {
		if plumbing.IsHash(ref) {
			continue // a commit: it must be reachable from another ref
		}
		var last error
		for _, name := range refNames(ref) {
			spec := "+" + name + ":" + name
			fmt.Fprintf(log, "fetch %s %s\n", remote, spec)
			idle := &FetchTimeoutError{Remote: remote, Ref: ref, Idle: true, Limit: lim.FetchIdle}
			err := fetchRetrying(ctx, r, dir, remote, spec, idle, log)
			if err == nil || errors.Is(err, git.NoErrAlreadyUpToDate) {
				last = nil
				break
			}
			last = err
			if ctx.Err() != nil {
				// The run's end, or the total limit: the cause says which.
				return context.Cause(ctx)
			}
			if errors.Is(err, idle) {
				return err
			}
			// Only a name that is not this kind of ref tries the next:
			// a server error or a pack cut short is the fetch's answer,
			// not "no such tag".
			var noMatch git.NoMatchingRefSpecError
			if !errors.As(err, &noMatch) {
				break
			}
		}
		if last != nil {
			return classifyFetchError(remote, ref, last)
		}
	}
	return nil
}

var prRef = regexp.MustCompile(`^pull/[0-9]+/head$`)

// refNames are the names fetch tries, in order, for a ref as
// Options.Refs gives it; each is fetched to the same name.
func refNames(ref string) []string {
	switch {
	case strings.HasPrefix(ref, "refs/"):
		return []string{ref}
	case prRef.MatchString(ref):
		return []string{"refs/" + ref}
	}
	return []string{"refs/heads/" + ref, "refs/tags/" + ref}
}

// fetchAttempts is how many times a fetch that failed in passing is tried,
// and fetchWait the wait before the second try, doubled before each
// next: a code host answers a 502 or drops a connection now and then, and
// one such answer should not fail a job that builds for an hour.
var (
	fetchAttempts = 3
	fetchWait     = 2 * time.Second
)

// fetchRetrying fetches one refspec into r at dir, again when the failure
// is transient (transientFetchError). A try that receives nothing for
// idle.Limit fails with idle, and is not tried again: a server that stalls
// that long is not passing a blip. What a failed try stored is left to
// removeLeftovers: go-git writes a pack to a temporary file and renames it
// only when whole, and moves refs only after that.
func fetchRetrying(ctx context.Context, r *git.Repository, dir, remote, spec string, idle *FetchTimeoutError, log io.Writer) error {
	wait := fetchWait
	for attempt := 1; ; attempt++ {
		tctx, progress, stop := watchIdle(ctx, dir, idle.Limit, idle, log)
		err := r.FetchContext(tctx, &git.FetchOptions{
			RemoteURL: remote,
			RefSpecs:  []config.RefSpec{config.RefSpec(spec)},
			Tags:      git.NoTags,
			Progress:  progress,
		})
		// A fetch that got all it needed stands, even if the watch ran
		// out while go-git indexed the pack it had received.
		stalled := err != nil && ctx.Err() == nil && errors.Is(context.Cause(tctx), idle)
		stop()
		if stalled {
			return idle
		}
		if err == nil || attempt >= fetchAttempts || ctx.Err() != nil || !transientFetchError(err) {
			return err
		}
		fmt.Fprintf(log, "fetch %s %s: %v; trying again in %v (attempt %d of %d)\n", remote, spec, err, wait, attempt+1, fetchAttempts)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// transientFetchError reports whether a fetch's failure may pass: a server
// error or rate limit (5xx, 429), a pack cut short, a connection reset.
// A ref or repository not found, a refused login or a bad pack is the
// answer, and is not asked again.
func transientFetchError(err error) bool {
	if code, ok := serverStatus(err); ok {
		return code >= 500 || code == http.StatusTooManyRequests
	}
	return packCutShort(err) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// serverStatus is the HTTP status the server answered a fetch with, when
// that is what failed it.
func serverStatus(err error) (int, bool) {
	var unexpected *plumbing.UnexpectedError
	if errors.As(err, &unexpected) {
		if he, ok := unexpected.Err.(*githttp.Err); ok {
			return he.StatusCode(), true
		}
	}
	return 0, false
}

// packCutShort reports whether a fetch failed because its pack ended early.
func packCutShort(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, packfile.ErrEmptyPackfile)
}

func classifyFetchError(remote, ref string, err error) error {
	var noMatch git.NoMatchingRefSpecError
	code, answered := serverStatus(err)
	switch {
	case errors.As(err, &noMatch):
		return fmt.Errorf("fetch %s from %s: %w", ref, remote, ErrNotFound)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return fmt.Errorf("fetch from %s: repository %w", remote, ErrNotFound)
	case answered:
		// go-git's own text names the URL of the request that failed, with
		// the query; the status is what tells a reader what happened.
		return fmt.Errorf("fetch %s from %s: the server answered %d %s", ref, remote, code, http.StatusText(code))
	case packCutShort(err):
		return fmt.Errorf("fetch %s from %s: the pack ended early (the connection dropped?): %w", ref, remote, err)
	}
	return fmt.Errorf("fetch %s from %s: %w", ref, remote, err)
}
