package docker

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// fakeEngine answers /_ping on a unix socket with the API version given.
func fakeEngine(t *testing.T, api string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", api)
		w.Write([]byte("OK"))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "unix://" + sock
}

// An engine older than Debian 12's is refused with a line that names it and
// what is needed; one as new is accepted.
func TestConnectRefusesOldEngine(t *testing.T) {
	t.Setenv("DOCKER_HOST", fakeEngine(t, "1.30"))
	_, err := Connect(t.Context())
	if err == nil || !strings.Contains(err.Error(), "too old") || !strings.Contains(err.Error(), `"1.30"`) || !strings.Contains(err.Error(), MinAPIVersion) {
		t.Fatalf("Connect to an engine of API 1.30: %v", err)
	}
	t.Setenv("DOCKER_HOST", fakeEngine(t, "1.41"))
	c, err := Connect(t.Context())
	if err != nil {
		t.Fatalf("Connect to an engine of API 1.41: %v", err)
	}
	c.Close()
}

// No engine at DOCKER_HOST: one line naming where it looked.
func TestConnectNoEngine(t *testing.T) {
	host := "unix://" + filepath.Join(t.TempDir(), "none.sock")
	t.Setenv("DOCKER_HOST", host)
	_, err := Connect(t.Context())
	if err == nil || !strings.Contains(err.Error(), "does not answer") || !strings.Contains(err.Error(), host) {
		t.Fatalf("Connect with no engine: %v", err)
	}
}
