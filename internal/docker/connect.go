package docker

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/versions"
	"github.com/docker/docker/client"
)

// MinAPIVersion is the oldest Engine API patchproof speaks: Docker 20.10's,
// Debian 12's docker.io.
const MinAPIVersion = "1.41"

// Connect connects to the engine of DOCKER_HOST (or the default socket),
// negotiating the API version, and refuses an engine older than
// MinAPIVersion.
func Connect(ctx context.Context) (*client.Client, error) {
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	ping, err := c.Ping(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("docker engine at %s does not answer (start dockerd, or set DOCKER_HOST): %w", c.DaemonHost(), err)
	}
	if ping.APIVersion == "" || versions.LessThan(ping.APIVersion, MinAPIVersion) {
		c.Close()
		return nil, fmt.Errorf("docker engine at %s is too old: it speaks Engine API %q, patchproof needs %s (Docker 20.10) or newer", c.DaemonHost(), ping.APIVersion, MinAPIVersion)
	}
	return c, nil
}
