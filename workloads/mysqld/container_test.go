package mysqld

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/patchproof/patchproof/internal/docker/dockertest"
)

// dockerServerOptions are Options for a server in a container on a network
// of the test's own.
func dockerServerOptions(t *testing.T) (Options, *client.Client) {
	t.Helper()
	c := dockertest.Client(t)
	img, err := EnsureImage(context.Background(), c, dockertest.ImageOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Dir:    filepath.Join(t.TempDir(), "db"),
		Engine: EngineDocker,
		Docker: &DockerOptions{Client: c, Image: img, Network: dockertest.Network(t, c), Labels: dockertest.Labels(t, "db")},
	}, c
}

// A server in a container: on its network by its alias, on its socket,
// with the short version, a user with a password (for the hosts a host
// server has), a datadir in the run dir, labelled and limited; Stop removes
// it, and a second start reuses the datadir.
func TestContainerServer(t *testing.T) {
	opt, c := dockerServerOptions(t)
	var log bytes.Buffer
	opt.Log = &log
	start := time.Now()
	s, err := Start(t.Context(), opt)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Logf("first start (datadir installed) in %v", time.Since(start).Round(time.Millisecond))
	defer s.Stop()
	if s.Host != defaultAlias || s.Port != containerPort || s.User != defaultUser || s.Password == "" || s.PID <= 0 || s.ContainerID == "" {
		t.Errorf("conn %+v pid %d container %q", s.Conn, s.PID, s.ContainerID)
	}
	if l := s.LocalConn(); l.Host != "127.0.0.1" || l.Port != containerPort || l.Socket != s.Socket {
		t.Errorf("local conn %+v", l)
	}
	if !shortVersionRE.MatchString(s.Version) {
		t.Errorf("version %q", s.Version)
	}
	if fi, err := os.Stat(s.Socket); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("socket %s: %v", s.Socket, err)
	}
	if filepath.Dir(s.Socket) != filepath.Join(s.Dir, "sock") {
		t.Errorf("socket %s: want it alone in %s/sock", s.Socket, s.Dir)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "data", "mysql")); err != nil {
		t.Errorf("datadir not in the run dir: %v", err)
	}
	if err := s.CreateDatabase(t.Context(), "pp_ctr"); err != nil {
		t.Fatal(err)
	}
	// The accounts of a host server, no more: PHP's tests tell.
	got, err := ask(t.Context(), s.Conn, "SELECT GROUP_CONCAT(Host ORDER BY Host) FROM mysql.user WHERE User = '"+s.User+"'")
	if err != nil || got != "127.0.0.1,localhost" {
		t.Errorf("the user's hosts: %q, %v; want 127.0.0.1,localhost", got, err)
	}
	in := dockertest.WaitRunning(t, c, "db")
	if in.HostConfig.Memory != defaultDockerMemory || in.HostConfig.PidsLimit == nil || *in.HostConfig.PidsLimit != defaultDockerPids {
		t.Errorf("limits: memory %d pids %v", in.HostConfig.Memory, in.HostConfig.PidsLimit)
	}
	ep := in.NetworkSettings.Networks[opt.Docker.Network]
	if ep == nil || !strings.Contains(strings.Join(ep.Aliases, " "), defaultAlias) || len(in.NetworkSettings.Networks) != 1 {
		t.Errorf("networks %v", in.NetworkSettings.Networks)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if left := dockertest.Containers(t, c); len(left) > 0 {
		t.Errorf("%d containers left after Stop", len(left))
	}

	start = time.Now()
	again, err := Start(t.Context(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("second start (datadir reused) in %v", time.Since(start).Round(time.Millisecond))
	if _, err := ask(t.Context(), again.Conn.WithDatabase("pp_ctr"), "SELECT 1"); err != nil {
		t.Errorf("the database of the first start: %v", err)
	}
	again.Stop()
}

// A server that cannot start fails with what it said, and leaves no
// container; cancelling the context given to Start removes a running one.
func TestContainerFailureAndCancel(t *testing.T) {
	opt, c := dockerServerOptions(t)
	bad := opt
	bad.ExtraArgs = []string{"--no-such-option"}
	_, err := Start(t.Context(), bad)
	t.Logf("a failed start: %v", err)
	if err == nil || !strings.Contains(err.Error(), "no-such-option") {
		t.Errorf("Start with a bad option: %v, want the server's complaint", err)
	}
	if left := dockertest.Containers(t, c); len(left) > 0 {
		t.Errorf("%d containers left after a failed start", len(left))
	}

	ctx, cancel := context.WithCancel(t.Context())
	s, err := Start(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for deadline := time.Now().Add(60 * time.Second); len(dockertest.Containers(t, c)) > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the container is still there 60s after the cancellation")
		}
	}
	s.Stop()
}

func TestContainerNeedsDockerOptions(t *testing.T) {
	_, err := Start(context.Background(), Options{Dir: t.TempDir(), Engine: EngineDocker})
	if err == nil || !strings.Contains(err.Error(), "no Docker client") {
		t.Errorf("Start(EngineDocker) without Docker options = %v", err)
	}
	_, err = Start(context.Background(), Options{Dir: t.TempDir(), Engine: "vm"})
	if !errors.Is(err, ErrEngineUnsupported) {
		t.Errorf("Start(vm) = %v, want ErrEngineUnsupported", err)
	}
}
