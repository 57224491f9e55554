// Package dockertest gives tests the real Docker engine: the one
// scripts/test starts and exports as DOCKER_HOST (a test skips only when no
// engine answers), the images patchproof makes, cached between runs, and
// labels of a test's own, by which it finds what it created and checks that
// nothing of it is left.
package dockertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/patchproof/patchproof/internal/aptsource"
	"github.com/patchproof/patchproof/internal/docker"
)

// LabelTest marks what one test created.
const LabelTest = "patchproof.test"

// Client connects to the engine, or skips the test when none answers.
func Client(t testing.TB) *client.Client {
	t.Helper()
	c, err := docker.Connect(context.Background())
	if err != nil {
		t.Skipf("no Docker engine (scripts/test starts one): %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ImageOptions are the options images are made with in tests: the cache of
// PATCHPROOF_CACHE (else the user's), the machine's Debian mirror and
// suites, as a run makes them.
func ImageOptions(t testing.TB) docker.ImageOptions {
	t.Helper()
	cache := os.Getenv("PATCHPROOF_CACHE")
	if cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(d, "patchproof")
	}
	mirror, err := aptsource.Default.Mirror()
	if err != nil {
		t.Fatalf("images are made from this machine's Debian mirror: %v", err)
	}
	// The making of an image (debootstrap, apt) is shown when the test
	// fails: its end is what says why.
	log := &tail{}
	t.Cleanup(func() {
		if t.Failed() && log.Len() > 0 {
			t.Logf("making images, the end of the log:\n%s", log.String())
		}
	})
	// The sources a run's images have: the same images.
	sources, _ := aptsource.Default.ImageSources(docker.DefaultSuite)
	return docker.ImageOptions{CacheDir: cache, Mirror: mirror, Sources: sources, Log: log}
}

// tail keeps the last 8 KiB written to it.
type tail struct {
	mu sync.Mutex
	bytes.Buffer
}

func (l *tail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.Buffer.Write(p)
	if over := l.Len() - 8<<10; over > 0 {
		l.Next(over)
	}
	return len(p), nil
}

// Labels are role's labels, owned by this process, and the test's own.
func Labels(t testing.TB, role string) map[string]string {
	l := docker.Labels(role)
	l[LabelTest] = testID(t)
	return l
}

func testID(t testing.TB) string {
	return fmt.Sprintf("%s-%d", t.Name(), os.Getpid())
}

// Network creates an internal network of the test's own, removed when the
// test ends.
func Network(t testing.TB, c *client.Client) string {
	t.Helper()
	name, err := docker.CreateNetwork(context.Background(), c, "patchproof-test", Labels(t, "network"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := docker.RemoveNetwork(context.Background(), c, name); err != nil {
			t.Errorf("%v", err)
		}
	})
	return name
}

// Containers lists the test's containers, running or not.
func Containers(t testing.TB, c *client.Client) []container.Summary {
	t.Helper()
	list, err := c.ContainerList(context.Background(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelTest+"="+testID(t)))})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// Networks lists the test's networks.
func Networks(t testing.TB, c *client.Client) []network.Summary {
	t.Helper()
	list, err := c.NetworkList(context.Background(), network.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelTest+"="+testID(t)))})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// WaitRunning waits for the test's one running container with the role
// and returns its inspection.
func WaitRunning(t testing.TB, c *client.Client, role string) container.InspectResponse {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, s := range Containers(t, c) {
			if s.State == "running" && s.Labels[docker.LabelRole] == role {
				in, err := c.ContainerInspect(context.Background(), s.ID)
				if err != nil {
					t.Fatal(err)
				}
				return in
			}
		}
	}
	t.Fatalf("no running %s container of the test within 60s", role)
	return container.InspectResponse{}
}
