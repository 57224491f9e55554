package docker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStart(t *testing.T) {
	for _, tt := range []struct {
		stat    string
		want    uint64
		wantErr bool
	}{
		{stat: "1234 (patchproof) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 8 0 987654 1000000 500", want: 987654},
		// A command name may hold spaces and parentheses.
		{stat: "1234 (a) b (c) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 8 0 42 1000000 500", want: 42},
		{stat: "1234 (short) S 1 2", wantErr: true},
		{stat: "garbage", wantErr: true},
	} {
		got, err := parseStart(tt.stat)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseStart(%q) = %d, %v; want %d, error %v", tt.stat, got, err, tt.want, tt.wantErr)
		}
	}
}

// An owner is gone when its PID is free or reused, and never when it is of
// another host: a later run removes only what a dead run of its own host
// left.
func TestOwnerGone(t *testing.T) {
	if self.Start == 0 {
		t.Fatal("this process's start time is unknown")
	}
	got, err := ParseOwner(self.String())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(self, got); d != "" {
		t.Errorf("owner round trip (-want +got):\n%s", d)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	for _, tt := range []struct {
		name string
		o    Owner
		gone bool
	}{
		{"this process", self, false},
		{"this PID, another start", Owner{Host: self.Host, PID: os.Getpid(), Start: self.Start + 1}, true},
		{"an ended process", Owner{Host: self.Host, PID: dead, Start: 1}, true},
		{"another host's", Owner{Host: self.Host + "-other", PID: dead, Start: 1}, false},
	} {
		if got := tt.o.Gone(); got != tt.gone {
			t.Errorf("%s: Gone = %v, want %v", tt.name, got, tt.gone)
		}
	}
	for _, bad := range []string{"", "host/1", "host/x/1", "host/0/1", "host/1/-1"} {
		if _, err := ParseOwner(bad); err == nil {
			t.Errorf("ParseOwner(%q): no error", bad)
		}
	}
}

func TestSpecConfigs(t *testing.T) {
	s := Spec{Image: "img", Cmd: []string{"x"}, Binds: []Bind{{Path: "/b", ReadOnly: true}, {Path: "/w"}},
		Network: "net", Aliases: []string{"db"}, Memory: 1 << 30, Pids: 100, Confined: true}
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
