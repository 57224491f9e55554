package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// mergeUpRepo is php-src's branches as merge-ups leave them: PHP-8.5 has
// merged PHP-8.4 and has a commit of its own, master has merged PHP-8.5
// and has one too; the PR is on PHP-8.4. With clash, master's own commit
// edits the line the PR edits.
func mergeUpRepo(t *testing.T, clash bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "php-src.git")
	r, err := git.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	write := func(parents []plumbing.Hash, stats, news string) plumbing.Hash {
		t.Helper()
		return commitOf(t, r, parents, map[string]string{"main/php_version.h": "8\n", "ext/mysqlnd/mysqlnd_statistics.h": stats, "NEWS": news})
	}
	stats := "a\nb\n#define LOCK(s) lock(s)\nc\nd\ne\nf\n"
	php84 := write(nil, stats, "8.4\n")
	php85 := write([]plumbing.Hash{php84}, stats, "8.4\n8.5\n")
	masterStats := stats + "g\n"
	if clash {
		masterStats = strings.Replace(masterStats, "lock(s)", "master_lock(s)", 1)
	}
	master := write([]plumbing.Hash{php85}, masterStats, "8.4\n8.5\nmaster\n")
	pr := write([]plumbing.Hash{php84}, strings.Replace(stats, "lock(s)", "atomic_add(s)", 1), "8.4\n")
	for name, h := range map[string]plumbing.Hash{
		"refs/heads/PHP-8.4": php84, "refs/heads/PHP-8.5": php85, "refs/heads/master": master, "refs/pull/9/head": pr,
	} {
		if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), h)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A PR on the lowest branch, merged up as php-src merges: into PHP-8.5,
// and that merge into master, each a merge commit of the two; a higher
// branch that edited the PR's line conflicts, with both sides.
func TestMergeUp(t *testing.T) {
	cfg := Config{Repo: mergeUpRepo(t, false), PR: 9, Base: "PHP-8.4", MergeUp: []string{"PHP-8.5", "master"}, Out: t.TempDir()}
	cfg.setDefaults()
	targets, err := plan(context.Background(), &cfg, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 3 || targets[1].Name != "PHP-8.5" || targets[2].Name != "master" {
		t.Fatalf("targets %v, want PHP-8.4, PHP-8.5, master", targets)
	}
	for i, t8 := range targets[1:] {
		bp := t8.Backport
		if bp == nil || !bp.MergeUp || !bp.Applied || bp.From != "PHP-8.4" || t8.Head.IsZero() {
			t.Fatalf("%s: %+v, want merged up from PHP-8.4", t8.Name, bp)
		}
		c, err := t8.Repo.Commit(t8.Head)
		if err != nil {
			t.Fatal(err)
		}
		// Parents: the branch's tip, and what was merged in (the PR's
		// head, then the PHP-8.5 merge).
		merged := targets[i].Head
		if len(c.ParentHashes) != 2 || c.ParentHashes[0] != t8.BranchTip || c.ParentHashes[1] != merged {
			t.Errorf("%s: parents %v, want its tip %s and %s", t8.Name, c.ParentHashes, t8.BranchTip, merged)
		}
		f, err := c.File("ext/mysqlnd/mysqlnd_statistics.h")
		if err != nil {
			t.Fatal(err)
		}
		text, _ := f.Contents()
		if !strings.Contains(text, "atomic_add(s)") || (t8.Name == "master") != strings.HasSuffix(text, "g\n") {
			t.Errorf("%s: the merged file is %q: want the change on the branch's own file", t8.Name, text)
		}
	}
	if targets[2].Backport.Via != "PHP-8.5" || strings.Join(targets[2].Backport.Chain, ",") != "PHP-8.5,master" {
		t.Errorf("master: via %q, chain %v; want through PHP-8.5, PHP-8.5,master", targets[2].Backport.Via, targets[2].Backport.Chain)
	}

	cfg.Repo = mergeUpRepo(t, true)
	targets, err = plan(context.Background(), &cfg, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	bp := targets[2].Backport
	if bp.Applied || !bp.ThreeWay || len(bp.Conflicts) != 1 || !targets[2].Head.IsZero() ||
		bp.Conflicts[0].Branch != "#define LOCK(s) master_lock(s)\n" || bp.Conflicts[0].Change != "#define LOCK(s) atomic_add(s)\n" {
		t.Errorf("master with a clash: %+v, want one conflict with both sides and no head", bp)
	}
	if !targets[1].Backport.Applied {
		t.Errorf("PHP-8.5: %+v, want merged up still", targets[1].Backport)
	}

	for _, bad := range []Config{
		{Repo: cfg.Repo, PR: 9, Base: "PHP-8.4", MergeUp: []string{"PHP-8.5", "PHP-8.5"}, Out: t.TempDir()},
		{Repo: cfg.Repo, PR: 9, Base: "PHP-8.4", MergeUp: []string{"PHP-8.4"}, Out: t.TempDir()},
		{Repo: cfg.Repo, PR: 9, Base: "PHP-8.4", MergeUp: []string{"master"}, BackportTo: []string{"master"}, Out: t.TempDir()},
	} {
		if err := bad.validate(); err == nil || !strings.Contains(err.Error(), "--merge-up") {
			t.Errorf("--merge-up %v (backport-to %v): %v, want an error naming --merge-up", bad.MergeUp, bad.BackportTo, err)
		}
	}
	// The PR's own branch, when it comes from the PR (no --base): caught
	// by the plan.
	own := Config{Repo: cfg.Repo, PR: 9, Base: "PHP-8.4", MergeUp: []string{"PHP-8.5"}, Out: t.TempDir()}
	own.setDefaults()
	own.MergeUp = []string{"PHP-8.4"}
	if _, err := plan(context.Background(), &own, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "the change's own branch") {
		t.Errorf("merge-up into the PR's own branch: %v, want refused", err)
	}
}

// A backport branch that has the change already: its merge would change
// nothing, so nothing of the change would be tested there; the target
// says so, naming the branch, and has no head.
func TestBackportAlreadyThere(t *testing.T) {
	dir := backportRepo(t)
	r, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := r.Reference("refs/pull/9/head", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Storer.SetReference(plumbing.NewHashReference("refs/heads/has-it", pr.Hash())); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Repo: dir, PR: 9, Base: "master", BackportTo: []string{"has-it"}, Out: t.TempDir()}
	cfg.setDefaults()
	targets, err := plan(context.Background(), &cfg, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	bp := targets[1].Backport
	if bp.Applied || !targets[1].Head.IsZero() || !strings.Contains(bp.Error, "the change is on has-it already") {
		t.Errorf("backport onto a branch that has the change: %+v, want an error naming has-it and no head", bp)
	}
}
