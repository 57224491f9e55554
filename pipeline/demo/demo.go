// Package demo makes the bundled offline demo: a local git repository of PHP
// 8.2.32's release tree (Debian's php8.2 source package) on branch PHP-8.2,
// and the same tree plus this package's mysqlnd atomic-statistics patch on
// branch mysqlnd-atomic-stats. It is built once and cached; its commits are
// deterministic, so every machine makes the same hashes.
package demo

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/ulikunitz/xz"

	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/pipeline/checkout"
)

// The demo's branches.
const (
	BaseBranch = "PHP-8.2"
	HeadBranch = "mysqlnd-atomic-stats"
)

// Source is a pinned upstream tarball.
type Source struct {
	Name string // file name in the Debian pool
	// Pool is its path in a Debian mirror, fetched from Options.Mirror.
	Pool string
	// URL is where to download it instead, when set (a test's server).
	URL     string
	SHA256  string
	Version string // PHP version, for commit messages
}

// PHP8232 is the release tree of PHP 8.2.32 as Debian ships it (the
// orig tarball of php8.2 8.2.32-1~deb12u1: the upstream tarball, configure
// included). Newer bookworm-security versions list in the index but their
// files are not served, hence the pin.
var PHP8232 = Source{
	Name:    "php8.2_8.2.32.orig.tar.xz",
	Pool:    "pool/main/p/php8.2/php8.2_8.2.32.orig.tar.xz",
	SHA256:  "e02aa173c236c12791696254d607da680e6d5516f8f5c2339642de7c4f944bd2",
	Version: "8.2.32",
}

// Patch is the mysqlnd atomic-statistics change, written for PHP 8.2.
//
//go:embed mysqlnd-atomic-stats.patch
var Patch []byte

// Options say where the demo comes from. The zero value of every field but
// CacheDir works.
type Options struct {
	CacheDir string // required: the repository and tarball live under CacheDir/demo
	Source   Source // default PHP8232
	// Mirror is the Debian mirror a Source's Pool path is fetched from: the
	// machine's apt mirror, or $PATCHPROOF_DEBIAN_MIRROR, as the caller
	// finds it. Needed only when the tarball is not in the cache yet.
	Mirror string
	Patch  []byte // default Patch
	// Branches are the release branches of the upstream (EnsureUpstream);
	// default ReleaseBranches.
	Branches []Divergence
	Log      io.Writer
	Client   *http.Client
}

// sig is the fixed author of the demo's commits: fixed so the hashes are the
// same on every machine.
var sig = object.Signature{Name: "patchproof demo", Email: "demo@patchproof.invalid", When: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}

// Ensure returns the path of the demo repository, making it when it is not
// in the cache yet.
func Ensure(ctx context.Context, opt Options) (string, error) {
	if opt.Source.Name == "" {
		opt.Source = PHP8232
	}
	if opt.Source.URL == "" && opt.Mirror != "" {
		opt.Source.URL = strings.TrimSuffix(opt.Mirror, "/") + "/" + opt.Source.Pool
	}
	if opt.Patch == nil {
		opt.Patch = Patch
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	dir := filepath.Join(opt.CacheDir, "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("demo cache %s: %w", dir, err)
	}
	ph := sha256.Sum256(opt.Patch)
	repo := filepath.Join(dir, fmt.Sprintf("php-%s-%s.git", opt.Source.Version, hex.EncodeToString(ph[:])[:12]))

	unlock, err := cachedir.Lock(repo + ".lock")
	if err != nil {
		return "", fmt.Errorf("lock %s: %w", repo, err)
	}
	defer unlock()
	if r, err := git.PlainOpen(repo); err == nil {
		if _, err := r.Reference(plumbing.NewBranchReferenceName(HeadBranch), true); err == nil {
			return repo, nil
		}
	}
	tarball := filepath.Join(dir, opt.Source.Name)
	if err := download(ctx, opt, tarball); err != nil {
		return "", err
	}
	fmt.Fprintf(opt.Log, "making the demo repository %s\n", repo)
	if err := Build(ctx, tarball, opt.Source.Version, opt.Patch, repo); err != nil {
		return "", err
	}
	return repo, nil
}

// download fetches the tarball unless a verified copy is already there. It
// lands by rename after its checksum matched.
func download(ctx context.Context, opt Options, dst string) error {
	if err := verify(dst, opt.Source.SHA256); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(opt.Log, "%v: downloading it again\n", err)
	}
	if opt.Source.URL == "" {
		return fmt.Errorf("download PHP source %s: no Debian mirror to fetch it from (set PATCHPROOF_DEBIAN_MIRROR, configure apt, or place %s at %s)", opt.Source.Name, opt.Source.Name, dst)
	}
	fmt.Fprintf(opt.Log, "downloading %s\n", opt.Source.URL)
	client := opt.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Minute}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, opt.Source.URL, nil)
	if err != nil {
		return fmt.Errorf("download %s: %w", opt.Source.URL, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("download PHP source %s: %w (the demo needs Debian's source package: place %s at %s, or set PATCHPROOF_DEBIAN_MIRROR)", opt.Source.URL, err, opt.Source.Name, dst)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download PHP source %s: %s (place %s at %s, or set PATCHPROOF_DEBIAN_MIRROR)", opt.Source.URL, resp.Status, opt.Source.Name, dst)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, resp.Body); err != nil {
		tmp.Close()
		return fmt.Errorf("download %s: %w", opt.Source.URL, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := verify(tmp.Name(), opt.Source.SHA256); err != nil {
		return fmt.Errorf("download %s: %w", opt.Source.URL, err)
	}
	return os.Rename(tmp.Name(), dst)
}

func verify(file, want string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("checksum of %s: got sha256 %s, want %s", file, got, want)
	}
	return nil
}

// Build makes a bare repository at dst from a release tarball (.tar.xz or
// .tar.gz, one top-level directory): the tree on BaseBranch, the tree plus
// patch on HeadBranch. dst appears complete or not at all.
func Build(ctx context.Context, tarball, version string, patch []byte, dst string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dst), filepath.Base(dst)+".tmp-")
	if err != nil {
		return fmt.Errorf("make demo repository: %w", err)
	}
	defer os.RemoveAll(tmp)
	r, err := git.PlainInit(tmp, true)
	if err != nil {
		return fmt.Errorf("make demo repository: %w", err)
	}
	files, err := importTarball(ctx, r, tarball)
	if err != nil {
		return err
	}
	root, err := checkout.WriteTree(r.Storer, files)
	if err != nil {
		return fmt.Errorf("make demo repository: %w", err)
	}
	base, err := checkout.WriteCommit(r.Storer, root, nil,
		fmt.Sprintf("PHP %s release tree\n\nFrom %s.\n", version, filepath.Base(tarball)), sig)
	if err != nil {
		return fmt.Errorf("make demo repository: %w", err)
	}
	baseCommit, err := r.CommitObject(base)
	if err != nil {
		return err
	}
	msg := string(patch)
	if i := strings.Index(msg, "\ndiff --git "); i >= 0 {
		msg = msg[:i+1]
	}
	head, err := checkout.ApplyPatch(r.Storer, baseCommit, bytes.NewReader(patch), strings.TrimSpace(msg)+"\n", sig)
	if err != nil {
		return fmt.Errorf("apply the demo patch to PHP %s: %w", version, err)
	}
	for name, h := range map[string]plumbing.Hash{BaseBranch: base, HeadBranch: head} {
		if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(name), h)); err != nil {
			return err
		}
	}
	if err := r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(BaseBranch))); err != nil {
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// importTarball stores every file of the tarball as a blob, with the
// top-level directory stripped.
func importTarball(ctx context.Context, r *git.Repository, tarball string) (checkout.Files, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return nil, fmt.Errorf("open PHP source: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	magic, _ := br.Peek(6)
	var rd io.Reader
	switch {
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		x, err := xz.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", tarball, err)
		}
		rd = x
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", tarball, err)
		}
		rd = z
	default:
		return nil, fmt.Errorf("read %s: not a .tar.xz or .tar.gz file", tarball)
	}
	files := checkout.Files{}
	tr := tar.NewReader(rd)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", tarball, err)
		}
		name := strings.TrimPrefix(path.Clean(h.Name), "./")
		if i := strings.IndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		} else {
			continue // the top-level directory itself
		}
		var data []byte
		mode := filemode.Regular
		switch h.Typeflag {
		case tar.TypeReg:
			if data, err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("read %s: %s: %w", tarball, h.Name, err)
			}
			if h.Mode&0o111 != 0 {
				mode = filemode.Executable
			}
		case tar.TypeSymlink:
			data, mode = []byte(h.Linkname), filemode.Symlink
		default:
			continue
		}
		hash, err := checkout.WriteBlob(r.Storer, data)
		if err != nil {
			return nil, err
		}
		files[name] = checkout.Entry{Mode: mode, Hash: hash}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("read %s: no files in it", tarball)
	}
	return files, nil
}
