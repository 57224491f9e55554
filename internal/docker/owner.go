package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/patchproof/patchproof/internal/proc"
)

// Labels on every container and network patchproof creates.
const (
	// LabelRole is what the object is for (build, db, tests, image,
	// network); the runners' clean-up step removes everything that has it.
	LabelRole = "patchproof"
	// LabelOwner names the patchproof process that created the object:
	// HOST/PID/START, START being the process's start time in clock ticks
	// since boot, so that a reused PID is not taken for the owner.
	LabelOwner = "patchproof.owner"
)

// Labels returns the labels of an object for role, owned by this process.
func Labels(role string) map[string]string {
	return map[string]string{LabelRole: role, LabelOwner: self.String()}
}

// Owner is a process that created Docker objects (see proc.Owner).
type Owner = proc.Owner

// ParseOwner parses an owner label.
func ParseOwner(s string) (Owner, error) { return proc.ParseOwner(s) }

// self is this process as an owner.
var self = proc.Self()

// RemoveLeftovers removes the containers, then the networks, that a
// patchproof process of this host created and did not remove because it
// was killed: those whose owner is gone. Objects of a live run, of another
// host, or without an owner label are left alone. It returns what it
// removed, as "container NAME" and "network NAME".
func RemoveLeftovers(ctx context.Context, c *client.Client) ([]string, error) {
	var removed []string
	var errs []error
	f := filters.NewArgs(filters.Arg("label", LabelOwner))
	list, err := c.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list leftover containers: %w", err)
	}
	for _, ctr := range list {
		if !ownerGone(ctr.Labels[LabelOwner]) {
			continue
		}
		name := short(ctr.ID)
		if len(ctr.Names) > 0 {
			name = strings.TrimPrefix(ctr.Names[0], "/")
		}
		if err := Remove(ctx, c, ctr.ID, 0); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "container "+name)
	}
	nets, err := c.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return removed, errors.Join(append(errs, fmt.Errorf("list leftover networks: %w", err))...)
	}
	for _, n := range nets {
		if !ownerGone(n.Labels[LabelOwner]) {
			continue
		}
		if err := RemoveNetwork(ctx, c, n.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "network "+n.Name)
	}
	return removed, errors.Join(errs...)
}

func ownerGone(label string) bool {
	o, err := ParseOwner(label)
	return err == nil && o.Gone()
}
