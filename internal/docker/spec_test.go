package docker

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSpecConfigs(t *testing.T) {
	s := Spec{Image: "img", Cmd: []string{"x"}, Binds: []Bind{{Path: "/b", ReadOnly: true}, {Path: "/w"}},
		Network: "net", Aliases: []string{"db"}, Memory: 1 << 30, Pids: 100, Confined: true, Caps: []string{"SETUID"}, CPUs: "0-1"}
	cfg, host, net, err := s.configs()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"/b:/b:ro", "/w:/w:rw"}, host.Binds); d != "" {
		t.Errorf("binds (-want +got):\n%s", d)
	}
	if host.NetworkMode != "net" || net.EndpointsConfig["net"].Aliases[0] != "db" || len(host.DNSOptions) == 0 {
		t.Errorf("network %q, endpoints %+v", host.NetworkMode, net.EndpointsConfig)
	}
	if host.Memory != 1<<30 || host.MemorySwap != 1<<30 || *host.PidsLimit != 100 {
		t.Errorf("limits: memory %d swap %d pids %d", host.Memory, host.MemorySwap, *host.PidsLimit)
	}
	if !host.ReadonlyRootfs || host.CapDrop[0] != "ALL" || host.SecurityOpt[0] != "no-new-privileges" || host.Tmpfs["/tmp"] == "" {
		t.Errorf("not confined: %+v", host)
	}
	if len(host.CapAdd) != 1 || host.CapAdd[0] != "SETUID" || host.CpusetCpus != "0-1" {
		t.Errorf("capabilities kept %v, cpuset %q; want [SETUID], 0-1", host.CapAdd, host.CpusetCpus)
	}
	if cfg.Image != "img" {
		t.Errorf("image %q", cfg.Image)
	}
	// Another container's network namespace: no names, no resolver of
	// its own.
	_, host, net, err = (Spec{Image: "img", Cmd: []string{"x"}, Network: "container:abc"}).configs()
	if err != nil || host.NetworkMode != "container:abc" || net != nil || host.DNSOptions != nil {
		t.Errorf("container network: mode %q, endpoints %v, dns %v, %v", host.NetworkMode, net, host.DNSOptions, err)
	}
	if _, _, _, err := (Spec{Image: "img", Cmd: []string{"x"}, Network: "container:abc", Aliases: []string{"db"}}).configs(); err == nil {
		t.Error("aliases in another container's namespace: no error")
	}
	// No network named: none at all.
	if _, host, _, _ := (Spec{Image: "img", Cmd: []string{"x"}}).configs(); host.NetworkMode != "none" {
		t.Errorf("network mode %q, want none", host.NetworkMode)
	}
	for _, bad := range []Spec{{Cmd: []string{"x"}}, {Image: "img"}, {Image: "img", Cmd: []string{"x"}, Binds: []Bind{{Path: "rel"}}}, {Image: "img", Cmd: []string{"x"}, Binds: []Bind{{Path: "/a:b"}}}} {
		if _, _, _, err := bad.configs(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// The sources reach apt as they were, whatever quotes they hold.
func TestAptSources(t *testing.T) {
	if aptSources("") != "" {
		t.Error("no sources: want the base image's")
	}
	want := "deb http://mirror.example/debian bookworm main\ndeb http://x.example/it's bookworm-security main\n"
	out := filepath.Join(t.TempDir(), "sources.list")
	script := strings.Replace(aptSources(want), "/etc/apt/sources.list;", out+";", 1)
	script = strings.Replace(script, "rm -f /etc/apt/sources.list.d/*; ", "", 1)
	if b, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if got, _ := os.ReadFile(out); string(got) != want {
		t.Errorf("sources.list %q, want %q", got, want)
	}
}

// An error inside a progress stream is an error, progress is not.
func TestReadStream(t *testing.T) {
	ok := `{"status":"Pulling fs layer","id":"a"}` + "\n" + `{"status":"Download complete","id":"a"}` + "\n"
	if err := readStream(strings.NewReader(ok), io.Discard); err != nil {
		t.Errorf("a stream of progress: %v", err)
	}
	bad := ok + `{"errorDetail":{"message":"no space left on device"},"error":"no space left on device"}` + "\n"
	if err := readStream(strings.NewReader(bad), io.Discard); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("a stream ending in an error: %v", err)
	}
}
