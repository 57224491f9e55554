package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
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

// ImageTag is the tag EnsureImage gives the image of repo with packages.
func ImageTag(repo string, packages []string, opt ImageOptions) string {
	opt = opt.withDefaults()
	id := opt.Suite + "\n" + strings.Join(packages, " ")
	if opt.Sources != "" {
		id += "\n" + opt.Sources
	}
	sum := sha256.Sum256([]byte(id))
	return repo + ":" + opt.Suite + "-" + hex.EncodeToString(sum[:])[:12]
}

// EnsureImage returns the image repo:SUITE-HASH, making it when missing: a
// Debian base image (pulled where a registry answers, else debootstrapped
// from the Debian mirror and imported, once), then packages installed into
// it with apt (from opt.Sources) and committed. The tag names the suite,
// the package list and the sources, so a change of either makes a new
// image. Images are made one at a time
// (a lock in CacheDir): they share the base.
//
// The image is committed from a container rather than built from a
// Dockerfile: the engine's builder would need the base image by a name it
// might try to pull, and a build context; a commit needs neither, and apt's
// error, when it fails, is in the container's output as it is here.
func EnsureImage(ctx context.Context, c *client.Client, repo string, packages []string, opt ImageOptions) (string, error) {
	opt = opt.withDefaults()
	tag := ImageTag(repo, packages, opt)
	unlock, err := cachedir.LockContext(ctx, filepath.Join(opt.CacheDir, "docker", "image.lock"), opt.Log)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := c.ImageInspect(ctx, tag); err == nil {
		return tag, nil
	}
	start := time.Now()
	base, err := EnsureBaseImage(ctx, c, opt)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(opt.Log, "installing %s into %s\n", strings.Join(packages, " "), tag)
	// policy-rc.d: no service starts while its package is installed (the
	// container has no init, and a server started here would be committed
	// half-running).
	script := "set -e; export DEBIAN_FRONTEND=noninteractive; printf '#!/bin/sh\\nexit 101\\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; " +
		aptSources(opt.Sources) +
		"apt-get update -q; apt-get install -y -q --no-install-recommends " +
		strings.Join(packages, " ") + "; apt-get clean; rm -rf /var/lib/apt/lists/*"
	// Not Run: the container is committed before it is removed. apt needs
	// the network, so this one container (running Debian's packages, no
	// code under test) is on the default bridge. What the commit keeps of
	// its configuration every container of the image inherits: so no
	// environment of its own, and its role but no owner label (a container
	// that inherited a dead owner would be taken for a leftover).
	spec := Spec{Image: base, Cmd: []string{"sh", "-c", script}, Labels: map[string]string{LabelRole: "image"}}
	cfg, _, _, err := spec.configs()
	if err != nil {
		return "", err
	}
	created, err := c.ContainerCreate(ctx, cfg, nil, nil, nil, "")
	if err != nil {
		return "", fmt.Errorf("make image %s: %w", tag, err)
	}
	defer Remove(ctx, c, created.ID, 0)
	if err := startAndWait(ctx, c, created.ID, opt.Log); err != nil {
		return "", fmt.Errorf("make image %s: install %s: %w; output ends:\n%s", tag, strings.Join(packages, " "), err, LogTail(ctx, c, created.ID, 15))
	}
	if _, err := c.ContainerCommit(ctx, created.ID, container.CommitOptions{Reference: tag}); err != nil {
		return "", fmt.Errorf("make image %s: commit: %w", tag, err)
	}
	fmt.Fprintf(opt.Log, "made %s in %v\n", tag, time.Since(start).Round(time.Second))
	return tag, nil
}

// aptSources is the shell that writes sources as apt's only sources; ""
// when they are the base image's.
func aptSources(sources string) string {
	if sources == "" {
		return ""
	}
	return "printf '%s' '" + strings.ReplaceAll(sources, "'", `'\''`) + "' >/etc/apt/sources.list; rm -f /etc/apt/sources.list.d/*; "
}

func startAndWait(ctx context.Context, c *client.Client, id string, log io.Writer) error {
	if err := c.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return err
	}
	if logs, err := c.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true}); err == nil {
		copyLogs(log, logs)
		logs.Close()
	}
	waitC, errC := c.ContainerWait(ctx, id, container.WaitConditionNotRunning)
	select {
	case w := <-waitC:
		if w.StatusCode != 0 {
			return fmt.Errorf("exit status %d", w.StatusCode)
		}
		return nil
	case err := <-errC:
		return err
	}
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
		cmd.Env = childenv.Environ()
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
	tar.Env = childenv.Environ()
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
