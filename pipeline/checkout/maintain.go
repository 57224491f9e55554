package checkout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/patchproof/patchproof/internal/cachedir"
)

// A mirror grows with every run: each PR validated leaves its
// refs/pull/N/head (and keeps the objects of an unmerged PR reachable),
// each fetch leaves one more packfile, and each backport or merge-up
// leaves its unreferenced commit as loose objects. Past either bound the
// run that fetched maintains the mirror: it drops the pull refs it did not
// ask for, then writes everything still reachable into one pack and
// deletes the rest. Variables, so that tests can lower them.
var (
	// maxPullRefs is how many refs/pull/* a mirror keeps before the
	// maintenance drops those the run did not fetch: every run fetches
	// the refs it needs, so a dropped one comes back when wanted.
	maxPullRefs = 200
	// maxPacks is how many packfiles a mirror holds before it is
	// repacked into one: go-git reads an object by looking through every
	// pack's index, and never merges packs itself.
	maxPacks = 32
)

// readersLock is the lock file beside a mirror that runs reading it hold
// shared (Repo.Close releases it): maintenance deletes packs and objects,
// and go-git opens a pack again at every read, so it runs only when it
// can take this lock exclusively, that is when no run has the mirror open.
func readersLock(path string) string { return path + ".readers" }

// maintainMirror bounds the mirror r at path (see maxPullRefs, maxPacks),
// keeping the refs named in keep (Options.Refs) and every branch and tag.
// The caller holds the mirror's lock, so nothing fetches meanwhile; it
// logs one line when it changes something or puts a change off, none
// otherwise. It must not be fatal to the run: whatever its error, and
// wherever it is killed, the mirror holds every object reachable from its
// refs:
//   - refs are dropped before anything is repacked, and a dropped ref
//     only makes objects unreachable;
//   - the new pack is whole (go-git writes it to a tmp_pack_* file and
//     renames it when its index is written) before any old pack or loose
//     object is deleted; a killed run leaves at most that temporary file
//     and a new pack's .idx without its .pack, which removeLeftovers
//     deletes;
//   - an old pack is deleted .pack first, so one half gone leaves an .idx
//     that go-git does not read (it lists packs by their .pack).
//
// r's view of the packs is stale afterwards: the caller opens the mirror
// again.
func maintainMirror(ctx context.Context, r *git.Repository, path string, keep []string, log io.Writer) error {
	start := time.Now()
	pulls, err := pullRefs(r)
	if err != nil {
		return err
	}
	packs, err := packFiles(path)
	if err != nil {
		return err
	}
	var drop []plumbing.ReferenceName
	if len(pulls) > maxPullRefs {
		drop = unwanted(pulls, keep)
		if len(drop) > 0 && namesCommit(keep) {
			// A commit named by hash may be reachable only from a pull
			// ref an earlier run fetched: dropping any could lose it.
			fmt.Fprintf(log, "mirror %s: %d pull refs, over %d, but the run names a commit by hash: none dropped\n", path, len(pulls), maxPullRefs)
			drop = nil
		}
	}
	if len(drop) == 0 && len(packs) <= maxPacks {
		return nil
	}
	unlock, ok, err := cachedir.TryLock(readersLock(path))
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintf(log, "mirror %s: %d pull refs, %d packs: maintenance put off, another run is reading the mirror\n", path, len(pulls), len(packs))
		return nil
	}
	defer unlock()
	for _, name := range drop {
		if err := r.Storer.RemoveReference(name); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
		// refs/pull/N/ is left empty: one directory per PR ever seen.
		os.Remove(filepath.Join(path, filepath.Dir(name.String())))
	}
	loose, err := repack(ctx, r, path)
	if err != nil && len(drop) > 0 {
		return fmt.Errorf("dropped %d of %d pull refs, then repack: %w", len(drop), len(pulls), err)
	}
	if err != nil {
		return fmt.Errorf("repack: %w", err)
	}
	fmt.Fprintf(log, "mirror %s maintained in %s: pull refs %d -> %d, packs %d -> 1, %d loose objects deleted\n",
		path, time.Since(start).Round(time.Millisecond), len(pulls), len(pulls)-len(drop), len(packs), loose)
	return nil
}

// pullRefs are the mirror's refs/pull/* names.
func pullRefs(r *git.Repository) ([]plumbing.ReferenceName, error) {
	refs, err := r.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	var pulls []plumbing.ReferenceName
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		if strings.HasPrefix(ref.Name().String(), "refs/pull/") {
			pulls = append(pulls, ref.Name())
		}
		return nil
	})
	return pulls, err
}

// unwanted are the pulls that none of keep (as Options.Refs gives them)
// fetches.
func unwanted(pulls []plumbing.ReferenceName, keep []string) []plumbing.ReferenceName {
	kept := map[string]bool{}
	for _, ref := range keep {
		for _, name := range refNames(ref) {
			kept[name] = true
		}
	}
	var drop []plumbing.ReferenceName
	for _, name := range pulls {
		if !kept[name.String()] {
			drop = append(drop, name)
		}
	}
	return drop
}

func namesCommit(refs []string) bool {
	for _, ref := range refs {
		if plumbing.IsHash(ref) {
			return true
		}
	}
	return false
}

// packFiles are the mirror's packfiles, as go-git lists them: by .pack.
func packFiles(path string) ([]string, error) {
	packs, err := filepath.Glob(filepath.Join(path, "objects", "pack", "pack-*.pack"))
	if err != nil {
		return nil, fmt.Errorf("list the packs of %s: %w", path, err)
	}
	return packs, nil
}

// repack writes every object reachable from r's refs into one new pack,
// then deletes the other packs and every loose object: those not in the
// new pack are unreachable, and the maintenance holds the mirror's lock
// and its readers' lock, so no run is writing or reading one. It returns
// how many loose objects it deleted.
//
// go-git's Repository.RepackObjects is not used: its walk fails on a tree
// that holds a symlink or a submodule, and it deletes the loose objects it
// packed before the new pack is saved.
func repack(ctx context.Context, r *git.Repository, path string) (int, error) {
	st, ok := r.Storer.(packStorer)
	if !ok {
		return 0, errors.New("the mirror's storage has no packfiles")
	}
	objs, err := reachable(ctx, st)
	if err != nil {
		return 0, err
	}
	old, err := st.ObjectPacks()
	if err != nil {
		return 0, err
	}
	cfg, err := r.Config()
	if err != nil {
		return 0, err
	}
	w, err := st.PackfileWriter()
	if err != nil {
		return 0, err
	}
	h, err := packfile.NewEncoder(&ctxWriter{ctx, w}, r.Storer, false).Encode(objs, cfg.Pack.Window)
	// Closing a writer that was given a whole pack saves it; one cut
	// short leaves a temporary file, for removeLeftovers.
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("write the new pack: %w", err)
	}
	for _, ext := range []string{".idx", ".pack"} {
		if _, err := os.Stat(filepath.Join(path, "objects", "pack", "pack-"+h.String()+ext)); err != nil {
			return 0, fmt.Errorf("the new pack: %w", err)
		}
	}
	for _, p := range old {
		if p == h {
			continue // the same objects in the same order: the same pack
		}
		if err := st.DeleteOldObjectPackAndIndex(p, time.Time{}); err != nil {
			return 0, fmt.Errorf("delete pack %s: %w", p, err)
		}
	}
	var loose []plumbing.Hash
	if err := st.ForEachObjectHash(func(h plumbing.Hash) error {
		loose = append(loose, h)
		return nil
	}); err != nil {
		return 0, err
	}
	for _, h := range loose {
		if err := st.DeleteLooseObject(h); err != nil {
			return 0, fmt.Errorf("delete loose object %s: %w", h, err)
		}
	}
	return len(loose), nil
}

// packStorer is what repack needs of the mirror's storage (go-git's
// filesystem storage).
type packStorer interface {
	storer.Storer
	storer.PackedObjectStorer
	storer.PackfileWriter
	storer.LooseObjectStorer
}

// reachable lists every object reachable from the hash refs of s: commits,
// their trees and parents, the trees' blobs (files and symlinks) and
// subtrees, annotated tags' targets. A submodule's commit is in another
// repository and is not followed. Blobs are listed without being read.
func reachable(ctx context.Context, s storer.Storer) ([]plumbing.Hash, error) {
	seen := map[plumbing.Hash]struct{}{}
	var todo []plumbing.Hash // commits, trees and tags to read
	visit := func(h plumbing.Hash) {
		if _, ok := seen[h]; !ok {
			seen[h] = struct{}{}
			todo = append(todo, h)
		}
	}
	refs, err := s.IterReferences()
	if err != nil {
		return nil, err
	}
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			visit(ref.Hash())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for n := 0; len(todo) > 0; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		h := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		o, err := s.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", h, err)
		}
		switch o.Type() {
		case plumbing.CommitObject:
			c, err := object.DecodeCommit(s, o)
			if err != nil {
				return nil, fmt.Errorf("commit %s: %w", h, err)
			}
			visit(c.TreeHash)
			for _, p := range c.ParentHashes {
				visit(p)
			}
		case plumbing.TreeObject:
			t, err := object.DecodeTree(s, o)
			if err != nil {
				return nil, fmt.Errorf("tree %s: %w", h, err)
			}
			for _, e := range t.Entries {
				switch e.Mode {
				case filemode.Dir:
					visit(e.Hash)
				case filemode.Submodule:
				default:
					seen[e.Hash] = struct{}{}
				}
			}
		case plumbing.TagObject:
			t, err := object.DecodeTag(s, o)
			if err != nil {
				return nil, fmt.Errorf("tag %s: %w", h, err)
			}
			visit(t.Target)
		}
	}
	objs := make([]plumbing.Hash, 0, len(seen))
	for h := range seen {
		objs = append(objs, h)
	}
	return objs, nil
}

// ctxWriter fails its writes once ctx is done: the encoder of a pack has
// no context of its own, and a repack of php-src takes a while.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
