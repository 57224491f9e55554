package docker

import (
	cerrdefs "github.com/containerd/errdefs"

	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
)

// CreateNetwork creates an internal bridge network named prefix-RANDOM: its
// containers reach each other (by their aliases, through the engine's DNS)
// and nothing else, no route out. It returns the network's name.
func CreateNetwork(ctx context.Context, c *client.Client, prefix string, labels map[string]string) (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	name := prefix + "-" + hex.EncodeToString(b)
	if _, err := c.NetworkCreate(ctx, name, network.CreateOptions{Driver: "bridge", Internal: true, Labels: labels}); err != nil {
		return "", fmt.Errorf("create network %s: %w", name, err)
	}
	return name, nil
}

// RemoveNetwork removes a network, on a fresh context (also after a
// cancellation). Its containers must be gone first.
func RemoveNetwork(ctx context.Context, c *client.Client, name string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	if err := c.NetworkRemove(ctx, name); err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove network %s: %w", name, err)
	}
	return nil
}
