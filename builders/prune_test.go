package builders

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/cachedir"
)

// fillCache builds n real tiny builds into a new cache, without a limit,
// and dates their last use an hour apart, the first the oldest. It returns
// the cache and the keys, first to last.
func fillCache(t *testing.T, n int) (string, []string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	t.Setenv("COUNT", filepath.Join(t.TempDir(), "count"))
	cache := cacheDir(t)
	b := &Builder{Exec: &Host{}, CacheDir: cache, CacheMax: -1}
	src := fakeTree(t, "int main(void) { return 0; }\n")
	start := time.Now().Add(-time.Duration(n+1) * time.Hour)
	var keys []string
	for i := range n {
		res, err := b.Build(context.Background(), Spec{Label: "base/nts " + string(rune('a'+i)), Side: "base", Source: src,
			TreeHash: "tree" + string(rune('a'+i)), Variant: NTS, Profile: ProfileMySQL, Jobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		used := start.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(filepath.Join(cache, "builds", res.Key+usedSuffix), used, used); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, res.Key)
	}
	// The run that filled it has ended.
	b.Release()
	return cache, keys
}

// sizes returns the size of each entry by key, and their total.
func sizes(t *testing.T, cache string) (map[string]int64, int64) {
	t.Helper()
	ents, err := Entries(cache)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int64{}
	var total int64
	for _, e := range ents {
		m[e.Key] = e.Size
		total += e.Size
	}
	return m, total
}

// present says which of keys have a usable entry in cache, and checks
// that a removed one left nothing but its lock file.
func present(t *testing.T, cache string, keys []string) []bool {
	t.Helper()
	var got []bool
	for _, k := range keys {
		dir := filepath.Join(cache, "builds", k)
		_, err := readBuild(dir)
		got = append(got, err == nil)
		if err == nil {
			continue
		}
		for _, p := range []string{dir, dir + usedSuffix} {
			if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s of a removed entry is left (%v)", p, err)
			}
		}
	}
	return got
}

func TestPrune(t *testing.T) {
	t.Run("under the limit nothing goes", func(t *testing.T) {
		cache, keys := fillCache(t, 3)
		_, total := sizes(t, cache)
		removed, err := Prune(cache, total, nil, nil)
		if err != nil || len(removed) != 0 {
			t.Errorf("Prune at its limit = %v, %v; want nothing removed", removed, err)
		}
		if d := cmp.Diff([]bool{true, true, true}, present(t, cache, keys)); d != "" {
			t.Errorf("entries present (-want +got):\n%s", d)
		}
	})

	t.Run("least recently used go first", func(t *testing.T) {
		cache, keys := fillCache(t, 4)
		size, total := sizes(t, cache)
		// Reusing the oldest makes it the most recently used.
		b := &Builder{Exec: &Host{}, CacheDir: cache, CacheMax: -1}
		res, err := b.Build(context.Background(), Spec{Label: "again", Source: t.TempDir(), TreeHash: "treea", Variant: NTS, Profile: ProfileMySQL, Jobs: 1})
		if err != nil || !res.Cached || res.Key != keys[0] {
			t.Fatalf("reuse of the oldest = %+v, %v", res, err)
		}
		var log bytes.Buffer
		removed, err := Prune(cache, total-size[keys[1]]-size[keys[2]], nil, &log)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{keys[1], keys[2]}, entryKeys(removed)); d != "" {
			t.Errorf("removed (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]bool{true, false, false, true}, present(t, cache, keys)); d != "" {
			t.Errorf("entries present (-want +got):\n%s", d)
		}
		if !strings.Contains(log.String(), "removed build "+keys[1]) {
			t.Errorf("prune log = %q, want it to name what it removed", log.String())
		}
	})

	t.Run("held lock and in-use key stay", func(t *testing.T) {
		cache, keys := fillCache(t, 5)
		size, total := sizes(t, cache)
		// Another run building or verifying the oldest holds its lock.
		unlock, ok, err := cachedir.TryLock(filepath.Join(cache, "builds", keys[0]+lockSuffix))
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		defer unlock()
		removed, err := Prune(cache, total-size[keys[2]]-size[keys[3]], []string{keys[1]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{keys[2], keys[3]}, entryKeys(removed)); d != "" {
			t.Errorf("removed (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]bool{true, true, false, false, true}, present(t, cache, keys)); d != "" {
			t.Errorf("entries present (-want +got):\n%s", d)
		}
	})

	t.Run("all in use: kept, and said", func(t *testing.T) {
		cache, keys := fillCache(t, 2)
		var log bytes.Buffer
		removed, err := Prune(cache, 1, keys, &log)
		if err != nil || len(removed) != 0 {
			t.Errorf("Prune of entries in use = %v, %v; want nothing removed", removed, err)
		}
		if d := cmp.Diff([]bool{true, true}, present(t, cache, keys)); d != "" {
			t.Errorf("entries present (-want +got):\n%s", d)
		}
		if !strings.Contains(log.String(), "2 builds in use are kept") {
			t.Errorf("prune log = %q, want a warning", log.String())
		}
	})

	t.Run("dry run removes nothing", func(t *testing.T) {
		cache, keys := fillCache(t, 2)
		removed, err := PrunePlan(cache, 1, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(keys, entryKeys(removed)); d != "" {
			t.Errorf("would remove (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]bool{true, true}, present(t, cache, keys)); d != "" {
			t.Errorf("entries present (-want +got):\n%s", d)
		}
	})
}

// TestBuildPrunes: a build that lands prunes the cache to the builder's
// limit, sparing what the same builder (this run) has used, though it is
// the least recently used.
func TestBuildPrunes(t *testing.T) {
	cache, keys := fillCache(t, 3)
	// This run reuses the oldest, then builds one more, under a limit
	// nothing fits.
	b := &Builder{Exec: &Host{}, CacheDir: cache, CacheMax: 1}
	if _, err := b.Build(context.Background(), Spec{Label: "base/nts", Source: t.TempDir(), TreeHash: "treea", Variant: NTS, Profile: ProfileMySQL, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	// Made the oldest again: as if the run had reused it long ago.
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(cache, "builds", keys[0]+usedSuffix), old, old); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	res, err := b.Build(context.Background(), Spec{Label: "head/nts", Source: fakeTree(t, "int main(void) { return 1; }\n"),
		TreeHash: "treenew", Variant: NTS, Profile: ProfileMySQL, Jobs: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]bool{true, false, false, true}, present(t, cache, append(keys, res.Key))); d != "" {
		t.Errorf("entries present after the build landed (-want +got):\n%s\n%s", d, log.String())
	}
	if !strings.Contains(log.String(), "2 builds in use are kept") {
		t.Errorf("build log lacks the over-limit warning:\n%s", log.String())
	}
}

// TestPruneSparesALiveRunsBuilds: a run holds every build it made or
// reused until it ends (Release), as its later stages read them: another
// run's prune, or 'patchproof cache prune', skips them though they are
// the least recently used, and lists them in use; once the run has ended
// they go like any other.
func TestPruneSparesALiveRunsBuilds(t *testing.T) {
	cache, keys := fillCache(t, 3)
	live := &Builder{Exec: &Host{}, CacheDir: cache, CacheMax: -1}
	t.Cleanup(live.Release)
	reused, err := live.Build(context.Background(), Spec{Label: "base/nts", Source: t.TempDir(), TreeHash: "treea", Variant: NTS, Profile: ProfileMySQL, Jobs: 1})
	if err != nil || !reused.Cached || reused.Key != keys[0] {
		t.Fatalf("reuse = %+v, %v", reused, err)
	}
	built, err := live.Build(context.Background(), Spec{Label: "head/nts", Source: fakeTree(t, "int main(void) { return 1; }\n"),
		TreeHash: "treenew", Variant: NTS, Profile: ProfileMySQL, Jobs: 1})
	if err != nil || built.Cached {
		t.Fatalf("build = %+v, %v", built, err)
	}
	// Both the least recently used: first in line.
	old := time.Now().Add(-48 * time.Hour)
	for _, k := range []string{keys[0], built.Key} {
		if err := os.Chtimes(filepath.Join(cache, "builds", k+usedSuffix), old, old); err != nil {
			t.Fatal(err)
		}
	}
	all := append(slices.Clone(keys), built.Key)
	ents, err := Entries(cache)
	if err != nil {
		t.Fatal(err)
	}
	inUse := map[string]bool{}
	for _, e := range ents {
		inUse[e.Key] = e.InUse
	}
	if d := cmp.Diff(map[string]bool{keys[0]: true, keys[1]: false, keys[2]: false, built.Key: true}, inUse); d != "" {
		t.Errorf("in use (-want +got):\n%s", d)
	}
	// Another run prunes, sparing its own builds only (none of these).
	var log bytes.Buffer
	removed, err := Prune(cache, 1, nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{keys[1], keys[2]}, entryKeys(removed)); d != "" {
		t.Errorf("removed while the run lives (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]bool{true, false, false, true}, present(t, cache, all)); d != "" {
		t.Errorf("entries present while the run lives (-want +got):\n%s", d)
	}
	// The same run may build its entries again: it does not wait for
	// itself.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if again, err := live.Build(ctx, Spec{Label: "base/nts again", Source: t.TempDir(), TreeHash: "treea", Variant: NTS, Profile: ProfileMySQL, Jobs: 1}); err != nil || !again.Cached {
		t.Fatalf("reuse again = %+v, %v", again, err)
	}
	live.Release()
	if removed, err = Prune(cache, 1, nil, &log); err != nil {
		t.Fatal(err)
	}
	// keys[0], used again just now, last.
	if d := cmp.Diff([]string{built.Key, keys[0]}, entryKeys(removed)); d != "" {
		t.Errorf("removed once the run ended (-want +got):\n%s", d)
	}
}

func entryKeys(es []Entry) []string {
	var keys []string
	for _, e := range es {
		keys = append(keys, e.Key)
	}
	return keys
}

// TestDefaultCacheMax: a quarter of the cache's file system, at most the
// cap, found for a cache directory not made yet from the nearest one that
// exists.
func TestDefaultCacheMax(t *testing.T) {
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	want := min(DefaultCacheMaxCap, int64(st.Blocks)*st.Bsize/4)
	for _, tt := range []struct{ name, dir string }{
		{"existing", dir},
		{"not made yet", filepath.Join(dir, "a", "b")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := DefaultCacheMax(tt.dir); err != nil || got != want {
				t.Errorf("DefaultCacheMax(%s) = %d, %v; want %d", tt.dir, got, err, want)
			}
		})
	}
}
