package builders

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
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/proc"
)

// BuildPackages are installed in the build image: the compiler, the tools a
// git checkout needs, apxs2, and the -dev packages of the official profile.
var BuildPackages = []string{
	"gcc", "g++", "make", "pkg-config", "autoconf", "bison", "re2c", "ccache", "file", "apache2-dev",
	"libargon2-dev", "libcurl4-openssl-dev", "libonig-dev", "libreadline-dev", "libsodium-dev",
	"libsqlite3-dev", "libssl-dev", "libxml2-dev", "zlib1g-dev",
}

// Docker runs commands in containers of a build image, through the Docker
// Engine API. Mounts are bound at the same path inside, so a build directory
// has one name on both sides. Every container is removed on every exit path.
type Docker struct {
	Client *client.Client
	Image  string   // the build image's ID or reference
	Mounts []string // host directories bound read-write at the same path
	User   string   // uid:gid to run as; "" for the image's default
	// Labels are added to every container, beside patchproof=build, which
	// the runners' clean-up step looks for.
	Labels map[string]string
}

var _ Executor = (*Docker)(nil)

func (d *Docker) String() string { return "docker" }

// NewDockerClient connects to the engine of DOCKER_HOST (or the default
// socket), negotiating the API version: Debian's dockerd speaks 1.41.
func NewDockerClient(ctx context.Context) (*client.Client, error) {
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	if _, err := c.Ping(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("docker engine at %s does not answer (start dockerd, or set DOCKER_HOST): %w", c.DaemonHost(), err)
	}
	return c, nil
}

// ID is the build image's ID.
func (d *Docker) ID(ctx context.Context) (string, error) {
	img, err := d.Client.ImageInspect(ctx, d.Image)
	if err != nil {
		return "", fmt.Errorf("inspect image %s: %w", d.Image, err)
	}
	return "docker/" + img.ID, nil
}

// containerEnv is a build container's whole environment: a PATH and HOME
// of its own and the build's variables, nothing of the host's.
func containerEnv(c Cmd) []string {
	return append([]string{"HOME=/tmp", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, c.Env...)
}

// Exec runs c in a new container and removes it afterwards, also when ctx is
// cancelled.
func (d *Docker) Exec(ctx context.Context, c Cmd) (runErr, execErr error) {
	env := containerEnv(c)
	var binds []string
	for _, m := range d.Mounts {
		binds = append(binds, m+":"+m)
	}
	labels := map[string]string{"patchproof": "build"}
	for k, v := range d.Labels {
		labels[k] = v
	}
	created, err := d.Client.ContainerCreate(ctx,
		&container.Config{Image: d.Image, Cmd: c.Args, Env: env, WorkingDir: c.Dir, User: d.User, Labels: labels},
		&container.HostConfig{Binds: binds, NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		return nil, fmt.Errorf("create container for %s: %w", c.Args[0], err)
	}
	defer func() {
		// A fresh context: the container goes even when ctx was cancelled.
		rmCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.Client.ContainerRemove(rmCtx, created.ID, container.RemoveOptions{Force: true}); err != nil && execErr == nil && runErr == nil {
			execErr = fmt.Errorf("remove container %s: %w", created.ID[:12], err)
		}
	}()
	if err := d.Client.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return nil, fmt.Errorf("start container for %s: %w", c.Args[0], err)
	}
	logs, err := d.Client.ContainerLogs(ctx, created.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		return nil, fmt.Errorf("container logs: %w", err)
	}
	out := c.Output
	if out == nil {
		out = io.Discard
	}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(out, out, logs)
		copied <- err
	}()
	waitC, errC := d.Client.ContainerWait(ctx, created.ID, container.WaitConditionNotRunning)
	var code int64
	select {
	case w := <-waitC:
		if w.Error != nil {
			logs.Close()
			return nil, fmt.Errorf("wait for container: %s", w.Error.Message)
		}
		code = w.StatusCode
	case err := <-errC:
		logs.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("wait for container: %w", err)
	}
	<-copied
	logs.Close()
	if code != 0 {
		return &ExitError{Args: c.Args, Code: int(code)}, nil
	}
	return nil, nil
}

// ImageOptions say how to get the build image.
type ImageOptions struct {
	CacheDir string    // the debootstrap root filesystem is kept here
	Suite    string    // Debian suite, default bookworm
	Mirror   string    // Debian mirror debootstrap fetches from: required where no registry answers
	Log      io.Writer // progress of the image's making
}

// EnsureBuildImage returns the build image, making it when missing: a Debian
// base image (pulled where a registry answers, else debootstrapped from the
// Debian mirror and imported, once), then the build packages installed into
// it and committed. The tag names the package list, so a change of the list
// makes a new image.
func EnsureBuildImage(ctx context.Context, c *client.Client, opt ImageOptions) (string, error) {
	if opt.Suite == "" {
		opt.Suite = "bookworm"
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	sum := sha256.Sum256([]byte(opt.Suite + "\n" + strings.Join(BuildPackages, " ")))
	tag := "patchproof-build:" + opt.Suite + "-" + hex.EncodeToString(sum[:])[:12]
	unlock, err := cachedir.LockContext(ctx, filepath.Join(opt.CacheDir, "docker", "image.lock"), opt.Log)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := c.ImageInspect(ctx, tag); err == nil {
		return tag, nil
	}
	base, err := ensureBaseImage(ctx, c, opt)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(opt.Log, "installing build packages into %s\n", tag)
	script := "set -e; export DEBIAN_FRONTEND=noninteractive; apt-get update -q; apt-get install -y -q --no-install-recommends " +
		strings.Join(BuildPackages, " ") + "; apt-get clean; rm -rf /var/lib/apt/lists/*"
	created, err := c.ContainerCreate(ctx, &container.Config{Image: base, Cmd: []string{"sh", "-c", script}}, nil, nil, nil, "")
	if err != nil {
		return "", fmt.Errorf("make build image: %w", err)
	}
	defer c.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true})
	d := &Docker{Client: c}
	if err := d.startAndWait(ctx, created.ID, opt.Log); err != nil {
		return "", fmt.Errorf("make build image: install packages: %w", err)
	}
	if _, err := c.ContainerCommit(ctx, created.ID, container.CommitOptions{Reference: tag}); err != nil {
		return "", fmt.Errorf("make build image: commit: %w", err)
	}
	return tag, nil
}

func (d *Docker) startAndWait(ctx context.Context, id string, log io.Writer) error {
	if err := d.Client.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return err
	}
	if logs, err := d.Client.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true}); err == nil {
		stdcopy.StdCopy(log, log, logs)
		logs.Close()
	}
	waitC, errC := d.Client.ContainerWait(ctx, id, container.WaitConditionNotRunning)
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

// ensureBaseImage returns a Debian image: debian:SUITE where it can be
// pulled, else one imported from a debootstrap root filesystem.
func ensureBaseImage(ctx context.Context, c *client.Client, opt ImageOptions) (string, error) {
	local := "patchproof-debian:" + opt.Suite
	if _, err := c.ImageInspect(ctx, local); err == nil {
		return local, nil
	}
	pullCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	rc, err := c.ImagePull(pullCtx, "docker.io/library/debian:"+opt.Suite, image.PullOptions{})
	if err == nil {
		_, err = io.Copy(io.Discard, rc)
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
		_, err = io.Copy(io.Discard, resp)
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
