package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/proc"
)

// ImageOptions say where an image's Debian comes from.
type ImageOptions struct {
	CacheDir string // the debootstrap root filesystem is kept here
	Suite    string // Debian suite, default bookworm
	Mirror   string // Debian mirror debootstrap fetches from: required where no registry answers
	// Sources is the sources.list apt installs an image's packages from
	// (aptsource.ImageSources: the suites and security archive this
	// machine's apt uses, so that an image has the package versions a host
	// run has). "" keeps the base image's own: the release suite alone.
	Sources string
	Log     io.Writer // progress of the image's making; apt's output
}

// DefaultSuite is the Debian release images are made of.
const DefaultSuite = "bookworm"

func (o ImageOptions) withDefaults() ImageOptions {
	if o.Suite == "" {
		o.Suite = DefaultSuite
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// Recipe is an image's Dockerfile (package images holds them) and what it
// is built from.
type Recipe struct {
	Name       string // what the image is for, in messages: "build", "database"
	Dockerfile []byte
	// From is the image given as the build argument BASE; "" for the
	// Debian base image (EnsureBaseImage).
	From string
	// FromID is From's image ID where From is an image of ours that is
	// made again under the same tag once removed (its packages then at
	// newer versions): the tag names it, so that this image is made again
	// on the new one instead of lasting on the old.
	FromID string
}

// ImageTag is the tag EnsureImage gives the image of repo made by r. It
// names the suite, the recipe, what it is built from (by tag and, where
// given, ID) and the apt sources,
// so that a change of any makes a new image; not which way the Debian base
// came (pulled or debootstrapped), so that a check can name the tag
// without making the base.
func ImageTag(repo string, r Recipe, opt ImageOptions) string {
	opt = opt.withDefaults()
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%q\n", opt.Suite, r.From, r.Dockerfile)
	// Only where given, so that the images with no FromID keep the tags
	// (and the builds keyed on the build image's tag their cache).
	if r.FromID != "" {
		fmt.Fprintf(h, "from-id %s\n", r.FromID)
	}
	if slices.Contains(declaredArgs(r.Dockerfile), "APT_SOURCES") {
		fmt.Fprintf(h, "%q\n", opt.Sources)
	}
	return repo + ":" + opt.Suite + "-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// EnsureImage returns the image repo:SUITE-HASH (ImageTag), building it
// from r when missing with the engine's own builder, whose layer cache
// keeps the steps a changed recipe shares with an earlier one. Images are
// made one at a time (a lock in CacheDir): they share the base.
//
// The classic builder is asked for: it takes BASE from the engine's own
// images without pulling and needs no session, and BuildKit, where the
// engine has it, needs both. apt needs the network, so the build's steps
// run on the default bridge; they run Debian's packages, no code under
// test.
func EnsureImage(ctx context.Context, c *client.Client, repo string, r Recipe, opt ImageOptions) (string, error) {
	opt = opt.withDefaults()
	tag := ImageTag(repo, r, opt)
	unlock, err := cachedir.LockContext(ctx, filepath.Join(opt.CacheDir, "docker", "image.lock"), opt.Log)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := c.ImageInspect(ctx, tag); err == nil {
		return tag, nil
	}
	start := time.Now()
	base := r.From
	if base == "" {
		if base, err = EnsureBaseImage(ctx, c, opt); err != nil {
			return "", err
		}
	}
	fmt.Fprintf(opt.Log, "building the %s image %s from %s\n", r.Name, tag, base)
	if err := buildImage(ctx, c, tag, base, r, opt); err != nil {
		return "", fmt.Errorf("make the %s image %s: %w", r.Name, tag, err)
	}
	// A stream that ended without an error yet left no image (a build cut
	// short by the engine) is no image.
	if _, err := c.ImageInspect(ctx, tag); err != nil {
		return "", fmt.Errorf("make the %s image %s: the build ended without it: %w", r.Name, tag, err)
	}
	fmt.Fprintf(opt.Log, "made %s in %v\n", tag, time.Since(start).Round(time.Second))
	return tag, nil
}

// buildImage builds r as tag. The build's context is the Dockerfile alone:
// the recipes copy nothing in. Its steps' containers are removed whether
// the build succeeds or fails; when ctx ends the request's connection
// closes, which cancels the build in the engine.
func buildImage(ctx context.Context, c *client.Client, tag, base string, r Recipe, opt ImageOptions) error {
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(r.Dockerfile)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(r.Dockerfile); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	// Only the arguments the recipe declares: the engine warns of any
	// other.
	values := map[string]string{"BASE": base, "APT_SOURCES": opt.Sources}
	args := map[string]*string{}
	for _, name := range declaredArgs(r.Dockerfile) {
		if v, ok := values[name]; ok {
			args[name] = &v
		}
	}
	resp, err := c.ImageBuild(ctx, &tarball, build.ImageBuildOptions{
		Tags:        []string{tag},
		Dockerfile:  "Dockerfile",
		BuildArgs:   args,
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1,
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out := &lastLines{}
	if err := readStream(resp.Body, io.MultiWriter(opt.Log, out)); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w; output ends:\n%s", err, out.String())
	}
	return nil
}

// declaredArgs are the names of the ARG instructions of a Dockerfile.
func declaredArgs(dockerfile []byte) []string {
	var names []string
	for _, line := range strings.Split(string(dockerfile), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.EqualFold(f[0], "ARG") {
			name, _, _ := strings.Cut(f[1], "=")
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// lastLines keeps the last 15 lines written to it: the end of a failed
// build's output is what says why it failed.
type lastLines struct {
	lines   []string
	partial string
}

func (l *lastLines) Write(p []byte) (int, error) {
	text := l.partial + string(p)
	parts := strings.Split(text, "\n")
	l.partial = parts[len(parts)-1]
	l.lines = append(l.lines, parts[:len(parts)-1]...)
	if over := len(l.lines) - 15; over > 0 {
		l.lines = slices.Delete(l.lines, 0, over)
	}
	return len(p), nil
}

func (l *lastLines) String() string {
	s := strings.Join(l.lines, "\n")
	if l.partial != "" {
		s += "\n" + l.partial
	}
	return s
}

// EnsureBaseImage returns the Debian image every image starts from:
// debian:SUITE where the engine can pull it from its default registry, else
// one imported from a debootstrap root filesystem (made once, kept in
// CacheDir). The caller holds the image lock, or does not mind two makers.
func EnsureBaseImage(ctx context.Context, c *client.Client, opt ImageOptions) (string, error) {
	opt = opt.withDefaults()
	local := "patchproof-debian:" + opt.Suite
	if _, err := c.ImageInspect(ctx, local); err == nil {
		return local, nil
	}
	pullCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	rc, err := c.ImagePull(pullCtx, "debian:"+opt.Suite, image.PullOptions{})
	if err == nil {
		err = readStream(rc, io.Discard)
		rc.Close()
		if _, ierr := c.ImageInspect(ctx, "debian:"+opt.Suite); err == nil && ierr == nil {
			cancel()
			return "debian:" + opt.Suite, nil
		}
	}
	cancel()
	fmt.Fprintf(opt.Log, "no registry answers (%v): making %s with debootstrap\n", err, local)
	rootfs := filepath.Join(opt.CacheDir, "docker", "rootfs-"+opt.Suite)
	if _, err := os.Stat(filepath.Join(rootfs, "etc", "debian_version")); err != nil {
		if opt.Mirror == "" {
			return "", fmt.Errorf("debootstrap %s: no Debian mirror given (the machine's apt sources name none; set PATCHPROOF_DEBIAN_MIRROR)", opt.Suite)
		}
		tmp := rootfs + ".tmp"
		os.RemoveAll(tmp)
		cmd := exec.CommandContext(ctx, "debootstrap", "--variant=minbase", opt.Suite, tmp, opt.Mirror)
		cmd.Env = childenv.For(childenv.Fetch) // the mirror may be behind a proxy
		cmd.Stdout, cmd.Stderr = opt.Log, opt.Log
		proc.KillGroupOnCancel(cmd)
		if err := cmd.Run(); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("debootstrap %s: %w (is debootstrap installed? see patchproof doctor --builder docker)", opt.Suite, err)
		}
		os.RemoveAll(rootfs)
		if err := os.Rename(tmp, rootfs); err != nil {
			return "", err
		}
	}
	tar := exec.CommandContext(ctx, "tar", "-C", rootfs, "-c", ".")
	tar.Env = childenv.For(childenv.Tool)
	stdout, err := tar.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := tar.Start(); err != nil {
		return "", fmt.Errorf("tar %s: %w", rootfs, err)
	}
	resp, err := c.ImageImport(ctx, image.ImportSource{Source: stdout, SourceName: "-"}, local, image.ImportOptions{})
	if err == nil {
		err = readStream(resp, opt.Log)
		resp.Close()
	}
	if werr := tar.Wait(); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		return "", fmt.Errorf("import %s: %w", local, err)
	}
	return local, nil
}

// readStream reads an engine's progress stream (a pull, an import) to its
// end with the engine's own decoder: an error the engine reports inside
// the stream, after a 200, is returned, not dropped with the rest.
func readStream(r io.Reader, out io.Writer) error {
	return jsonmessage.DisplayJSONMessagesStream(r, out, 0, false, nil)
}
