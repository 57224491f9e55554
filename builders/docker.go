package builders

import (
	"context"
	"fmt"
	"maps"

	"github.com/docker/docker/client"

	"github.com/patchproof/patchproof/images"
	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/proc"
)

// Docker runs commands in containers of a build image, through the Docker
// Engine API. A command's directory (the build being made) is bound
// read-write at the same path inside, so a build directory has one name on
// both sides, and so are the command's Mounts, read-only where they say so
// (the shared ccache, for a build of untrusted code). Nothing else of the
// host is: not the cache's other builds, which a build could otherwise
// change. Every container is removed on every exit path.
type Docker struct {
	Client *client.Client
	Image  string // the build image's ID or reference
	User   string // uid:gid to run as; "" for the image's default
	// Labels are added to every container, beside patchproof=build, which
	// the runners' clean-up step looks for.
	Labels map[string]string
}

var _ Executor = (*Docker)(nil)

func (d *Docker) String() string { return string(KindDocker) }

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
	return append(docker.BaseEnv(), c.Env...)
}

// Exec runs c in a new container, with no network, and removes it
// afterwards, also when ctx is cancelled.
func (d *Docker) Exec(ctx context.Context, c Cmd) (runErr, execErr error) {
	spec := docker.Spec{
		Image: d.Image,
		Cmd:   c.Args,
		Env:   containerEnv(c),
		Dir:   c.Dir,
		User:  d.User,
		// Labels given by the caller (an owner, a test's own) come on top.
		Labels: map[string]string{docker.LabelRole: "build"},
	}
	maps.Copy(spec.Labels, d.Labels)
	if c.Dir != "" {
		spec.Binds = append(spec.Binds, docker.Bind{Path: c.Dir})
	}
	for _, m := range c.Mounts {
		spec.Binds = append(spec.Binds, docker.Bind{Path: m.Path, ReadOnly: m.ReadOnly})
	}
	code, err := docker.Run(ctx, d.Client, spec, c.Output)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return &proc.ExitError{Args: c.Args, Code: code}, nil
	}
	return nil, nil
}

// ImageOptions say how to get the build image.
type ImageOptions = docker.ImageOptions

// BuildRecipe is the build image's: images/build.Dockerfile.
var BuildRecipe = docker.Recipe{Name: "build", Dockerfile: images.Build}

// EnsureBuildImage returns the build image, building it when missing from
// its Dockerfile on the Debian base image (pulled where a registry
// answers, else debootstrapped from the Debian mirror and imported, once).
// The tag names the recipe, so a change of it makes a new image.
func EnsureBuildImage(ctx context.Context, c *client.Client, opt ImageOptions) (string, error) {
	return docker.EnsureImage(ctx, c, "patchproof-build", BuildRecipe, opt)
}

// ServeRecipe is the serve image's (images/serve.Dockerfile), on the build
// image build, which must exist: the recipe names its image ID, so that a
// build image made again under its tag makes the serve image again, and
// the servers have the libraries the builds were linked against.
func ServeRecipe(ctx context.Context, c *client.Client, build string) (docker.Recipe, error) {
	inspect, err := c.ImageInspect(ctx, build)
	if err != nil {
		return docker.Recipe{}, fmt.Errorf("the build image %s: %w", build, err)
	}
	return docker.Recipe{Name: "serve", Dockerfile: images.Serve, From: build, FromID: inspect.ID}, nil
}

// EnsureServeImage returns the image a build's servers run in, building
// the build image first when it is missing: the serve image starts from
// it.
func EnsureServeImage(ctx context.Context, c *client.Client, opt ImageOptions) (string, error) {
	build, err := EnsureBuildImage(ctx, c, opt)
	if err != nil {
		return "", err
	}
	r, err := ServeRecipe(ctx, c, build)
	if err != nil {
		return "", err
	}
	return docker.EnsureImage(ctx, c, "patchproof-serve", r, opt)
}
