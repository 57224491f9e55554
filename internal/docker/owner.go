package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
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

// Owner is a process that created Docker objects.
type Owner struct {
	Host  string
	PID   int
	Start uint64 // clock ticks after boot, /proc/PID/stat field 22
}

func (o Owner) String() string { return fmt.Sprintf("%s/%d/%d", o.Host, o.PID, o.Start) }

// ParseOwner parses an owner label.
func ParseOwner(s string) (Owner, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Owner{}, fmt.Errorf("owner %q: want HOST/PID/START", s)
	}
	pid, err1 := strconv.Atoi(parts[1])
	start, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil || pid <= 0 {
		return Owner{}, fmt.Errorf("owner %q: want HOST/PID/START", s)
	}
	return Owner{Host: parts[0], PID: pid, Start: start}, nil
}

// self is this process as an owner.
var self = func() Owner {
	host, _ := os.Hostname()
	start, _ := processStart(os.Getpid())
	return Owner{Host: host, PID: os.Getpid(), Start: start}
}()

// Gone reports whether o is a process of this host that has ended: its PID
// is free, or taken by a process that started at another time. A process
// of another host is never gone (it cannot be told from here).
func (o Owner) Gone() bool {
	if o.Host != self.Host {
		return false
	}
	start, err := processStart(o.PID)
	return err != nil || start != o.Start
}

// processStart reads a process's start time from /proc/PID/stat.
func processStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStart(string(b))
}

// parseStart takes field 22, starttime, out of a /proc/PID/stat line. The
// command name (field 2) is in parentheses and may hold spaces and
// parentheses itself: the fields are counted after the last ')'.
func parseStart(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("stat: no command name")
	}
	fields := strings.Fields(stat[i+1:]) // from field 3, state
	const starttime = 22 - 3
	if len(fields) <= starttime {
		return 0, errors.New("stat: too few fields")
	}
	return strconv.ParseUint(fields[starttime], 10, 64)
}

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
