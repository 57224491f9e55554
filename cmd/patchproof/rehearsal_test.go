package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/demo"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
	"github.com/patchproof/patchproof/pipeline/results"
)

// The production path in small, against an in-process GitHub that serves
// the repository over git's smart HTTP protocol: `patchproof run --pr N
// --repo URL --target T --stages checkout`, as the validation workflow's
// jobs run it (scripts/validate-job), and its faults. The PHP build and the
// rest of the path are scripts/rehearse's (e2e_rehearsal_test.go).

var rehearsalPR = strconv.Itoa(demo.UpstreamPR)

// rehearsalUpstream makes a php-src-shaped upstream as the demo's is made
// (demo.BuildUpstream): master, refs/pull/N/head with a change of
// statistics.h, PHP-8.4 (the change applies one line further down) and
// PHP-8.5 (it conflicts). A file of 150 kB of randomness makes the first
// fetch big and a later one's small, so the two can be told apart.
func rehearsalUpstream(t *testing.T, php bool) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 150_000)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	files := map[string]string{
		"php/ext/mysqlnd/mysqlnd.c":    "int a;\n",
		"php/ext/mysqlnd/statistics.h": "#ifdef ZTS\n#define LOCK(x) lock(x)\n#endif\n",
		"php/ext/standard/big.txt":     hex.EncodeToString(big),
	}
	if php {
		files["php/main/php_version.h"] = "#define PHP_VERSION \"8.2.99\"\n"
	}
	dir := t.TempDir()
	tarball := writeTarGz(t, dir, files)
	change := "mysqlnd: no lock\n\ndiff --git a/ext/mysqlnd/statistics.h b/ext/mysqlnd/statistics.h\n--- a/ext/mysqlnd/statistics.h\n+++ b/ext/mysqlnd/statistics.h\n" +
		"@@ -1,3 +1,3 @@\n #ifdef ZTS\n-#define LOCK(x) lock(x)\n+#define LOCK(x)\n #endif\n"
	src := filepath.Join(dir, "demo.git")
	if err := demo.Build(context.Background(), tarball, "8.2.99", []byte(change), src); err != nil {
		t.Fatal(err)
	}
	header := "diff --git a/ext/mysqlnd/statistics.h b/ext/mysqlnd/statistics.h\n--- a/ext/mysqlnd/statistics.h\n+++ b/ext/mysqlnd/statistics.h\n"
	branches := []demo.Divergence{
		{Branch: "PHP-8.4", From: demo.UpstreamMaster, Patch: []byte("a comment\n\n" + header +
			"@@ -1,2 +1,3 @@\n+/* PHP-8.4 */\n #ifdef ZTS\n #define LOCK(x) lock(x)\n")},
		{Branch: "PHP-8.5", From: "PHP-8.4", Patch: []byte("a conflict\n\n" + header +
			"@@ -2,3 +2,3 @@\n #ifdef ZTS\n-#define LOCK(x) lock(x)\n+#define LOCK(x) lock((x))\n #endif\n")},
	}
	up := filepath.Join(dir, "php-src.git")
	if err := demo.BuildUpstream(context.Background(), src, up, branches); err != nil {
		t.Fatal(err)
	}
	return up
}

// rehearsalFake serves a fresh upstream as php/php-src, with the PR, and
// returns the fake, the upstream's path and the repository's URL as the
// workflow spells it.
func rehearsalFake(t *testing.T) (*githubfake.Fake, string, string) {
	t.Helper()
	cleanEnv(t)
	up := rehearsalUpstream(t, true)
	f := githubfake.New(t)
	f.AddUser("patchproof-bot", cmdToken)
	f.ServeGit("php", "php-src", up)
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: demo.UpstreamPR,
		Base: githubfake.Branch{Ref: "master"}, Head: githubfake.Branch{Ref: "atomic-stats"}})
	return f, up, strings.TrimSuffix(f.GitURL("php", "php-src"), ".git")
}

// job runs `patchproof run` as a validate job does, checkout only, and
// returns its exit status and what it printed as its error. A job that got
// through its checkout ends as a run that checked nothing does: see
// checkedOut.
func job(t *testing.T, f *githubfake.Fake, cache, out string, args ...string) (int, string) {
	t.Helper()
	all := append([]string{"run", "--cache", cache, "--out", out, "--github-api", f.URL(), "--stages", "checkout",
		"--backport-to", "PHP-8.4,PHP-8.5"}, args...)
	var stdout, stderr, msg bytes.Buffer
	err := patchproof(context.Background(), &stdout, &stderr, all)
	code := exitCode(&msg, err)
	return code, strings.TrimSuffix(msg.String(), "\n")
}

// checkedOut reports whether a checkout-only job got through its
// checkout: it then exits 2, saying that nothing was checked, as every run
// that validated nothing does.
func checkedOut(code int, msg string) bool {
	return code == 2 && msg == "patchproof: "+results.NothingCheckedReason
}

// moveHead puts a new commit, changing mysqlnd.c, on the PR's head.
func moveHead(t *testing.T, up string) (from, to plumbing.Hash) {
	t.Helper()
	r, err := git.PlainOpen(up)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := r.Reference(plumbing.ReferenceName(demo.UpstreamPRRef), true)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := r.CommitObject(ref.Hash())
	tree, _ := c.Tree()
	flat, err := checkout.Flatten(tree)
	if err != nil {
		t.Fatal(err)
	}
	blob, _ := checkout.WriteBlob(r.Storer, []byte("int a = 1;\n"))
	flat["ext/mysqlnd/mysqlnd.c"] = checkout.Entry{Mode: flat["ext/mysqlnd/mysqlnd.c"].Mode, Hash: blob}
	root, _ := checkout.WriteTree(r.Storer, flat)
	h, err := checkout.WriteCommit(r.Storer, root, []plumbing.Hash{c.Hash}, "review\n", object.Signature{Name: "t", Email: "t@x.invalid", When: c.Author.When})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(demo.UpstreamPRRef), h)); err != nil {
		t.Fatal(err)
	}
	return c.Hash, h
}

// A job per target over HTTP: the first fetches everything into a cold
// mirror, the next nothing, and after a push only the new commit; each
// job validates its own target of one plan (the PR's base branch asked of
// GitHub), PHP-8.5's conflict named by file and hunk.
func TestRehearsalJobs(t *testing.T) {
	f, up, url := rehearsalFake(t)
	cache := t.TempDir()
	read := func(out string) *results.Result {
		t.Helper()
		res, err := results.Read(filepath.Join(out, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	out := filepath.Join(t.TempDir(), "master")
	if code, msg := job(t, f, cache, out, "--repo", url, "--pr", rehearsalPR, "--target", "master"); !checkedOut(code, msg) {
		t.Fatalf("master: exit %d: %s", code, msg)
	}
	cold := f.PackBytes()
	// big.txt is 150 kB of randomness, however compressed.
	if cold < 120_000 {
		t.Errorf("the cold fetch brought %d bytes, want the whole repository (> 120000)", cold)
	}
	if _, err := os.Stat(checkout.MirrorPath(cache, url)); err != nil {
		t.Errorf("no mirror: %v", err)
	}
	res := read(out)
	if len(res.Targets) != 1 || res.Targets[0].Name != "master" || res.Targets[0].Head.Ref != "pull/"+rehearsalPR+"/head" {
		t.Fatalf("targets %+v, want master at pull/%s/head", res.Targets, rehearsalPR)
	}
	head := res.Targets[0].Head.Commit

	out84 := filepath.Join(t.TempDir(), "PHP-8.4")
	if code, msg := job(t, f, cache, out84, "--repo", url, "--pr", rehearsalPR, "--base", "master", "--expect-head", head, "--target", "PHP-8.4"); !checkedOut(code, msg) {
		t.Fatalf("PHP-8.4: exit %d: %s", code, msg)
	}
	if bp := read(out84).Targets[0].Backport; bp == nil || !bp.Applied || bp.FromCommit != head {
		t.Errorf("PHP-8.4: backport %+v, want applied from %s", bp, head)
	}
	out85 := filepath.Join(t.TempDir(), "PHP-8.5")
	if code, msg := job(t, f, cache, out85, "--repo", url, "--pr", rehearsalPR, "--base", "master", "--expect-head", head, "--target", "PHP-8.5"); code != 1 {
		t.Fatalf("PHP-8.5: exit %d, want 1 (the backport does not apply): %s", code, msg)
	}
	bp := read(out85).Targets[0].Backport
	if bp == nil || bp.Applied || !bp.ThreeWay || len(bp.Conflicts) != 1 || bp.Conflicts[0].File != "ext/mysqlnd/statistics.h" || bp.Conflicts[0].Hunk != "line 2" ||
		bp.Conflicts[0].Branch == "" || bp.Conflicts[0].Change == "" {
		t.Errorf("PHP-8.5: backport %+v, want one three-way conflict in ext/mysqlnd/statistics.h at line 2, with both sides", bp)
	}
	if n := f.PackBytes() - cold; n != 0 {
		t.Errorf("the warm jobs fetched %d bytes, want none: nothing was pushed", n)
	}

	_, moved := moveHead(t, up)
	before := f.PackBytes()
	out2 := filepath.Join(t.TempDir(), "master2")
	if code, msg := job(t, f, cache, out2, "--repo", url, "--pr", rehearsalPR, "--base", "master", "--expect-head", moved.String(), "--target", "master"); !checkedOut(code, msg) {
		t.Fatalf("after the push: exit %d: %s", code, msg)
	}
	if n := f.PackBytes() - before; n <= 0 || n > 2000 {
		t.Errorf("after the push the fetch brought %d bytes, want only the new commit's objects (< 2000)", n)
	}
	if got := read(out2).Targets[0].Head.Commit; got != moved.String() {
		t.Errorf("after the push the head is %s, want %s", got, moved)
	}
}

// Each fault: one line naming it, exit 2, nothing in --out, and no
// half-made mirror in the cache: a cold mirror is not there at all, a
// warm one keeps its refs and holds no temporary pack.
func TestRehearsalFaults(t *testing.T) {
	tests := []struct {
		name  string
		warm  bool // a job has filled the mirror before the fault
		fault func(t *testing.T, f *githubfake.Fake, up string) []string
		want  string // in the one line
	}{
		{"server error", false, func(t *testing.T, f *githubfake.Fake, up string) []string {
			f.FailNext("", "/php/php-src", 503, 100)
			return nil
		}, "the server answered 503 Service Unavailable"},
		{"server error, warm mirror", true, func(t *testing.T, f *githubfake.Fake, up string) []string {
			moveHead(t, up)
			f.FailNext("", "/php/php-src", 502, 100)
			return nil
		}, "the server answered 502 Bad Gateway"},
		{"no such pull request", false, func(t *testing.T, f *githubfake.Fake, up string) []string {
			return []string{"--pr", "999"}
		}, "no such pull request php/php-src#999"},
		{"no such pull request, base given", false, func(t *testing.T, f *githubfake.Fake, up string) []string {
			return []string{"--pr", "999", "--base", "master"}
		}, "pull/999/head"},
		{"head moved since the plan", true, func(t *testing.T, f *githubfake.Fake, up string) []string {
			old, _ := moveHead(t, up)
			return []string{"--expect-head", old.String()}
		}, "the head moved since it was planned"},
		{"truncated pack", false, func(t *testing.T, f *githubfake.Fake, up string) []string {
			f.TruncatePacks("php", "php-src", 100)
			return nil
		}, "fetch master from"},
		{"truncated pack, warm mirror", true, func(t *testing.T, f *githubfake.Fake, up string) []string {
			moveHead(t, up)
			f.TruncatePacks("php", "php-src", 100)
			return nil
		}, "fetch pull/" + rehearsalPR + "/head from"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, up, url := rehearsalFake(t)
			cache := t.TempDir()
			mirror := checkout.MirrorPath(cache, url)
			var refsBefore string
			if tt.warm {
				if code, msg := job(t, f, cache, filepath.Join(t.TempDir(), "warm"), "--repo", url, "--pr", rehearsalPR, "--target", "master"); !checkedOut(code, msg) {
					t.Fatalf("the warming job: exit %d: %s", code, msg)
				}
				refsBefore = mirrorRefs(t, mirror)
			}
			args := append([]string{"--repo", url, "--pr", rehearsalPR, "--target", "master"}, tt.fault(t, f, up)...)
			out := filepath.Join(t.TempDir(), "out")
			code, line := job(t, f, cache, out, args...)
			t.Log(line)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, line)
			}
			if strings.Contains(line, "\n") || !strings.Contains(line, tt.want) {
				t.Errorf("error %q: want one line containing %q", line, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("the fault left %s", out)
			}
			if tmp, _ := filepath.Glob(mirror + ".tmp-*"); len(tmp) > 0 {
				t.Errorf("a half-made mirror is left: %v", tmp)
			}
			if !tt.warm {
				if _, err := os.Stat(mirror); !os.IsNotExist(err) {
					t.Errorf("a cold mirror was left after the fault: %v", err)
				}
				return
			}
			if packs, _ := filepath.Glob(filepath.Join(mirror, "objects", "pack", "tmp_*")); len(packs) > 0 {
				t.Errorf("a temporary pack is left in the mirror: %v", packs)
			}
			if got := mirrorRefs(t, mirror); got != refsBefore && tt.name != "head moved since the plan" {
				t.Errorf("the mirror's refs changed:\n%s\nwant\n%s", got, refsBefore)
			}
		})
	}
}

// A repository that is not php-src is refused, naming it.
func TestRehearsalNotPHPSrc(t *testing.T) {
	cleanEnv(t)
	f := githubfake.New(t)
	f.ServeGit("someone", "not-php", rehearsalUpstream(t, false))
	url := f.GitURL("someone", "not-php")
	out := filepath.Join(t.TempDir(), "out")
	code, line := job(t, f, t.TempDir(), out, "--repo", url, "--base", "master", "--head", demo.UpstreamPRRef)
	if code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, "not a php-src tree") || !strings.Contains(line, url) {
		t.Errorf("exit %d, %q; want 2 and one line naming %s, not a php-src tree", code, line, url)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refusal left %s", out)
	}
}

// mirrorRefs lists a mirror's refs, one "name hash" a line, sorted.
func mirrorRefs(t *testing.T, mirror string) string {
	t.Helper()
	r, err := git.PlainOpen(mirror)
	if err != nil {
		t.Fatal(err)
	}
	it, _ := r.References()
	var lines []string
	it.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			lines = append(lines, ref.Name().String()+" "+ref.Hash().String())
		}
		return nil
	})
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
