package githubfake_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

// gitRepo makes a bare repository with master (a commit with a file of
// size bytes) and refs/pull/1/head (a commit on it), and returns its
// path, the repository and the two commits.
func gitRepo(t *testing.T, size int) (string, *git.Repository, plumbing.Hash, plumbing.Hash) {
	t.Helper()
	dir := t.TempDir() + "/upstream.git"
	r, err := git.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, size/2)
	rand.Read(big)
	master := commit(t, r, nil, map[string]string{"big.txt": hex.EncodeToString(big), "a.c": "int a;\n"})
	head := commit(t, r, &master, map[string]string{"big.txt": hex.EncodeToString(big), "a.c": "int a = 1;\n"})
	setRef(t, r, "refs/heads/master", master)
	setRef(t, r, "refs/pull/1/head", head)
	return dir, r, master, head
}

var when = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func commit(t *testing.T, r *git.Repository, parent *plumbing.Hash, files map[string]string) plumbing.Hash {
	t.Helper()
	flat := checkout.Files{}
	for name, body := range files {
		h, err := checkout.WriteBlob(r.Storer, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		flat[name] = checkout.Entry{Mode: 0o100644, Hash: h}
	}
	root, err := checkout.WriteTree(r.Storer, flat)
	if err != nil {
		t.Fatal(err)
	}
	var parents []plumbing.Hash
	if parent != nil {
		parents = []plumbing.Hash{*parent}
	}
	h, err := checkout.WriteCommit(r.Storer, root, parents, "c\n", object.Signature{Name: "t", Email: "t@x.invalid", When: when})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func setRef(t *testing.T, r *git.Repository, name string, h plumbing.Hash) {
	t.Helper()
	if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), h)); err != nil {
		t.Fatal(err)
	}
}

// fetch fetches refs/pull/1/head into a new bare repository at into, or
// into the one there.
func fetch(url, into string) error {
	r, err := git.PlainOpen(into)
	if err != nil {
		if r, err = git.PlainInit(into, true); err != nil {
			return err
		}
	}
	rem := git.NewRemote(r.Storer, &config.RemoteConfig{Name: "origin", URLs: []string{url}})
	err = rem.Fetch(&git.FetchOptions{RefSpecs: []config.RefSpec{"+refs/pull/1/head:refs/pull/1/head"}})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}

// The fake serves a repository over git's smart HTTP, at both URL forms
// GitHub has; a fetch after a push brings only the new objects, and the
// PR's head follows the ref.
func TestServeGit(t *testing.T) {
	dir, r, master, head := gitRepo(t, 200_000)
	f := githubfake.New(t)
	f.ServeGit("php", "php-src", dir)
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
		Base: githubfake.Branch{Ref: "master"}, Head: githubfake.Branch{Ref: "x"}})

	prHead := func() (string, string) {
		_, body, _ := do(t, f, "GET", "/repos/php/php-src/pulls/1", "", "")
		pr := body.(map[string]any)
		return pr["base"].(map[string]any)["sha"].(string), pr["head"].(map[string]any)["sha"].(string)
	}
	if b, h := prHead(); b != master.String() || h != head.String() {
		t.Errorf("PR base %s head %s, want the repository's %s and %s", b, h, master, head)
	}

	mirror := t.TempDir() + "/mirror.git"
	if err := fetch(f.GitURL("php", "php-src"), mirror); err != nil {
		t.Fatalf("cold fetch: %v", err)
	}
	cold := f.PackBytes()
	// 200,000 hex digits of random bytes: 100 kB, however compressed.
	if cold < 80_000 {
		t.Errorf("the cold fetch's pack is %d bytes, want the whole repository (> 80000)", cold)
	}

	moved := commit(t, r, &head, map[string]string{"a.c": "int a = 2;\n"})
	setRef(t, r, "refs/pull/1/head", moved)
	if _, h := prHead(); h != moved.String() {
		t.Errorf("after the push the PR's head is %s, want %s", h, moved)
	}
	// GitHub serves the repository without .git too, as the workflow
	// spells it ($GITHUB_SERVER_URL/OWNER/REPO).
	if err := fetch(strings.TrimSuffix(f.GitURL("php", "php-src"), ".git"), mirror); err != nil {
		t.Fatalf("warm fetch: %v", err)
	}
	if warm := f.PackBytes() - cold; warm <= 0 || warm > 2000 {
		t.Errorf("the warm fetch's pack is %d bytes, want only the new commit's objects (< 2000)", warm)
	}
	m, _ := git.PlainOpen(mirror)
	if ref, err := m.Reference("refs/pull/1/head", true); err != nil || ref.Hash() != moved {
		t.Errorf("the mirror's refs/pull/1/head = %v (%v), want %s", ref, err, moved)
	}

	// A status may be set on any commit of the repository.
	if code, _, _ := do(t, f, "GET", "/repos/php/php-src/commits/master", "", ""); code != 200 {
		t.Errorf("GET commits/master: %d, want 200 (a branch of the repository)", code)
	}
	// No push.
	req, _ := http.NewRequest("POST", f.GitURL("php", "php-src")+"/git-receive-pack", bytes.NewReader(nil))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("receive-pack: %v %v, want 403", resp, err)
	}
}

// Faults: a server error and a pack cut short fail the fetch; an
// unknown repository is not found.
func TestServeGitFaults(t *testing.T) {
	dir, _, _, _ := gitRepo(t, 100_000)
	f := githubfake.New(t)
	f.ServeGit("php", "php-src", dir)

	f.FailNext("", "/php/php-src", 503, 1)
	err := fetch(f.GitURL("php", "php-src"), t.TempDir()+"/m.git")
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("fetch during a 503: %v, want the status", err)
	}

	f.TruncatePacks("php", "php-src", 1)
	if err := fetch(f.GitURL("php", "php-src"), t.TempDir()+"/m.git"); err == nil {
		t.Error("a fetch of a pack cut in half succeeded")
	}
	if err := fetch(f.GitURL("php", "php-src"), t.TempDir()+"/m.git"); err != nil {
		t.Errorf("the fetch after the fault: %v", err)
	}

	err = fetch(f.GitURL("php", "nothing"), t.TempDir()+"/m.git")
	if !errors.Is(err, transport.ErrRepositoryNotFound) {
		t.Errorf("fetch of an unknown repository: %v, want not found", err)
	}
}
