package docker

import (
	"fmt"
	"io"
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

// A tag names the recipe, what it is built from (by tag and ID), the suite and, where
// the recipe takes them, the apt sources: a change of any is a new image.
func TestImageTag(t *testing.T) {
	r := Recipe{Name: "x", Dockerfile: []byte("ARG BASE\nFROM ${BASE}\nARG APT_SOURCES=\nRUN true\n")}
	opt := ImageOptions{Sources: "deb http://mirror.example/debian bookworm main\n"}
	tag := ImageTag("repo", r, opt)
	if !strings.HasPrefix(tag, "repo:bookworm-") || len(tag) != len("repo:bookworm-")+12 {
		t.Errorf("tag %q, want repo:bookworm-HASH", tag)
	}
	if again := ImageTag("repo", r, opt); again != tag {
		t.Errorf("the same recipe: %q then %q", tag, again)
	}
	other := opt
	other.Sources = "deb http://other.example/debian bookworm main\n"
	suite := opt
	suite.Suite = "trixie"
	from := r
	from.From = "patchproof-build:x"
	rebuilt := from
	rebuilt.FromID = "sha256:0123"
	recipe := r
	recipe.Dockerfile = append([]byte{}, r.Dockerfile...)
	recipe.Dockerfile = append(recipe.Dockerfile, "RUN false\n"...)
	for what, got := range map[string]string{
		"other sources":    ImageTag("repo", r, other),
		"another suite":    ImageTag("repo", r, suite),
		"another base":     ImageTag("repo", from, opt),
		"a changed recipe": ImageTag("repo", recipe, opt),
	} {
		if got == tag {
			t.Errorf("%s: the same tag %q", what, tag)
		}
	}
	// The same base tag on another image (made again) is another image.
	if ImageTag("repo", rebuilt, opt) == ImageTag("repo", from, opt) {
		t.Error("its base made again under the same tag: the same tag")
	}
	// A recipe that takes no sources is not rebuilt for them.
	plain := Recipe{Dockerfile: []byte("ARG BASE\nFROM ${BASE}\n")}
	if ImageTag("repo", plain, opt) != ImageTag("repo", plain, other) {
		t.Error("a recipe without APT_SOURCES: the tag moved with the sources")
	}
}

func TestDeclaredArgs(t *testing.T) {
	got := declaredArgs([]byte("# ARG NOT\nARG BASE=debian:bookworm\nFROM ${BASE}\narg lower\n  ARG APT_SOURCES=\nARG BASE\nRUN echo ARG X\n"))
	if d := cmp.Diff([]string{"BASE", "lower", "APT_SOURCES"}, got); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
}

// A failed build's error ends with the end of its output: that says why.
func TestLastLines(t *testing.T) {
	var l lastLines
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&l, "line %d\n", i)
	}
	l.Write([]byte("no newline"))
	got := strings.Split(l.String(), "\n")
	if len(got) != 16 || got[0] != "line 6" || got[14] != "line 20" || got[15] != "no newline" {
		t.Errorf("kept %q", got)
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
