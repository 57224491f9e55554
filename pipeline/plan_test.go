package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/results"
)

var sig = object.Signature{Name: "t", Email: "t@example.org", When: time.Unix(1700000000, 0).UTC()}

func commit(t *testing.T, r *git.Repository, parent plumbing.Hash, files map[string]string) plumbing.Hash {
	t.Helper()
	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = append(parents, parent)
	}
	return commitOf(t, r, parents, files)
}

// commitOf commits files (path: text) to r with the parents given: two
// for a merge.
func commitOf(t *testing.T, r *git.Repository, parents []plumbing.Hash, files map[string]string) plumbing.Hash {
	t.Helper()
	flat := checkout.Files{}
	for p, c := range files {
		h, err := checkout.WriteBlob(r.Storer, []byte(c))
		if err != nil {
			t.Fatal(err)
		}
		flat[p] = checkout.Entry{Mode: filemode.Regular, Hash: h}
	}
	root, err := checkout.WriteTree(r.Storer, flat)
	if err != nil {
		t.Fatal(err)
	}
	h, err := checkout.WriteCommit(r.Storer, root, parents, "commit\n", sig)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// backportRepo has master, a PR on master, a PHP-8.4 branch where the
// change applies at an offset, a PHP-8.5 branch where it conflicts, and a
// PHP-8.3 branch where only a three-way merge takes it.
func backportRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "php-src.git")
	r, err := git.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	stats := "a\nb\n#define LOCK(s) lock(s)\nc\nd\n"
	files := func(statsH string) map[string]string {
		return map[string]string{"main/php_version.h": "8\n", "ext/mysqlnd/mysqlnd_statistics.h": statsH}
	}
	root := commit(t, r, plumbing.ZeroHash, files(stats))
	master := commit(t, r, root, files(stats+"e\n"))
	pr := commit(t, r, root, files(strings.Replace(stats, "lock(s)", "atomic_add(s)", 1)))
	php84 := commit(t, r, root, files("new 1\nnew 2\n"+stats))
	php85 := commit(t, r, root, files(strings.Replace(stats, "lock(s)", "other_lock(s)", 1)))
	// A line of the change's context changed: the patch does not apply,
	// a three-way merge does.
	php83 := commit(t, r, root, files(strings.Replace(stats, "a\n", "A\n", 1)))
	for name, h := range map[string]plumbing.Hash{
		"refs/heads/master": master, "refs/pull/9/head": pr, "refs/heads/PHP-8.4": php84, "refs/heads/PHP-8.5": php85,
		"refs/heads/PHP-8.3": php83,
	} {
		if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), h)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestBackports(t *testing.T) {
	repo := backportRepo(t)
	out := t.TempDir()
	res, err := Execute(context.Background(), Config{
		Repo: repo, PR: 9, Base: "master", BackportTo: []string{"PHP-8.3", "PHP-8.4", "PHP-8.5"},
		Stages: selectStages("checkout"), Out: out, Cache: t.TempDir(),
	})
	if !errors.Is(err, results.ErrCheckFailed) {
		t.Fatalf("Execute = %v, want a failed check (a backport conflicts)", err)
	}
	type row struct {
		Name     string
		Applied  bool
		Trees    bool
		Merged   []string
		Files    []string
		ThreeWay bool
	}
	var got []row
	for _, tr := range res.Targets {
		r := row{Name: tr.Name, Trees: tr.Trees.Head != "", Applied: tr.Backport == nil || tr.Backport.Applied}
		if bp := tr.Backport; bp != nil {
			r.Merged, r.ThreeWay = bp.Merged, bp.ThreeWay
			for _, c := range bp.Conflicts {
				r.Files = append(r.Files, c.File+" "+c.Hunk+": "+strings.TrimSpace(c.Branch)+" | "+strings.TrimSpace(c.Change))
			}
		}
		got = append(got, r)
	}
	want := []row{
		{Name: "master", Applied: true, Trees: true},
		{Name: "PHP-8.3", Applied: true, Trees: true, Merged: []string{"ext/mysqlnd/mysqlnd_statistics.h"}, ThreeWay: true},
		{Name: "PHP-8.4", Applied: true, Trees: true},
		{Name: "PHP-8.5", Applied: false, Trees: false, ThreeWay: true,
			Files: []string{"ext/mysqlnd/mysqlnd_statistics.h line 3: #define LOCK(s) other_lock(s) | #define LOCK(s) atomic_add(s)"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("targets (-want +got):\n%s", d)
	}
	// The PR's own base is the merge-base, not master's tip.
	if !res.Targets[0].Base.IsMergeBase || res.Targets[0].Base.Commit == res.Targets[0].Base.BranchTip {
		t.Errorf("master base = %+v, want the merge-base below the tip", res.Targets[0].Base)
	}
}

func TestPlanTargetSelection(t *testing.T) {
	repo := backportRepo(t)
	cfg := Config{Repo: repo, PR: 9, Base: "master", BackportTo: []string{"PHP-8.4"}, Target: "PHP-8.4", Out: t.TempDir()}
	cfg.setDefaults()
	targets, err := plan(context.Background(), &cfg, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 1 || targets[0].Name != "PHP-8.4" || targets[0].Head.IsZero() {
		t.Fatalf("targets = %+v, want PHP-8.4 alone, applied", targets)
	}
	cfg.Target = "PHP-7.4"
	var ie *results.InputError
	if _, err := plan(context.Background(), &cfg, t.TempDir(), nil); !errors.As(err, &ie) {
		t.Errorf("unknown --target = %v, want an InputError", err)
	}
	cfg.Target, cfg.BackportTo = "", []string{"PHP-9.9"}
	if _, err := plan(context.Background(), &cfg, t.TempDir(), nil); !errors.As(err, &ie) || !strings.Contains(err.Error(), "PHP-9.9") {
		t.Errorf("missing backport branch = %v, want an InputError naming it", err)
	}
}
