package docker

import (
	"context"
	"fmt"

	"github.com/docker/docker/client"
)

// Connect connects to the engine of DOCKER_HOST (or the default socket),
// negotiating the API version: Debian's dockerd speaks 1.41.
func Connect(ctx context.Context) (*client.Client, error) {
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
