package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/builders"
)

// fakeMachine writes a /proc and a /sys/fs/cgroup with the files HostChecks
// reads; "" leaves one out.
func fakeMachine(t *testing.T, paranoid, controllers, self string) (proc, cgroup string) {
	t.Helper()
	proc, cgroup = t.TempDir(), t.TempDir()
	write := func(path, s string) {
		if s == "" {
			return
		}
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proc, "sys/kernel/perf_event_paranoid"), paranoid)
	write(filepath.Join(proc, "self/cgroup"), self)
	write(filepath.Join(cgroup, "cgroup.controllers"), controllers)
	os.MkdirAll(filepath.Join(cgroup, "user.slice/mine"), 0o755)
	return proc, cgroup
}

func TestHostChecks(t *testing.T) {
	bench, _ := ParseStageSet([]string{"bench"})
	tests := []struct {
		name                        string
		paranoid, controllers, self string
		euid                        int
		builder                     builders.ExecutorKind
		want                        []HostCheck
	}{
		{name: "a runner as it should be", paranoid: "2\n", controllers: "cpuset cpu io memory pids\n", self: "0::/user.slice/mine\n", euid: 1000,
			want: []HostCheck{{What: "kernel.perf_event_paranoid", OK: true, Status: "2 (at most 2: perf may profile this user's processes)"},
				{What: "cgroup v2", OK: true, Optional: true, Status: "unified, cpu controller, CGROUP/user.slice/mine delegated"}}},
		{name: "Debian's default paranoia, no cgroup v2", paranoid: "3\n", euid: 1000,
			want: []HostCheck{{What: "kernel.perf_event_paranoid", Status: "3: perf record needs 2 or less (sysctl -w kernel.perf_event_paranoid=2), or root"},
				{What: "cgroup v2", Optional: true, Status: "not mounted at CGROUP: CPU time is read from /proc"}}},
		{name: "root at any level, no cpu controller", paranoid: "4", controllers: "memory pids", euid: 0,
			want: []HostCheck{{What: "kernel.perf_event_paranoid", OK: true, Status: "4 (root: any level)"},
				{What: "cgroup v2", Optional: true, Status: "no cpu controller: CPU time is read from /proc"}}},
		{name: "docker: the engine's cgroups", paranoid: "1", controllers: "cpu", euid: 1000, builder: builders.KindDocker,
			want: []HostCheck{{What: "kernel.perf_event_paranoid", OK: true, Status: "1 (at most 2: perf may profile this user's processes)"},
				{What: "cgroup v2", OK: true, Optional: true, Status: "unified, cpu controller: the engine accounts each container's CPU time"}}},
		{name: "no paranoid file", controllers: "cpu", self: "garbage", euid: 1000,
			want: []HostCheck{{What: "kernel.perf_event_paranoid", Status: "unreadable"},
				{What: "cgroup v2", Optional: true, Status: "this process's cgroup is unknown: CPU time is read from /proc"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc, cgroup := fakeMachine(t, tt.paranoid, tt.controllers, tt.self)
			got := HostChecks(HostOptions{Stages: bench, Builder: tt.builder, Proc: proc, Cgroup: cgroup, Euid: tt.euid})
			for i := range got {
				got[i].Status = strings.ReplaceAll(got[i].Status, cgroup, "CGROUP")
				if strings.HasPrefix(got[i].Status, "unreadable") {
					got[i].Status = "unreadable"
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// The builds need free disk in the cache, measured where the cache will
// be made when it is not there yet.
func TestHostChecksDisk(t *testing.T) {
	dir := t.TempDir()
	build, _ := ParseStageSet([]string{"build"})
	for _, tt := range []struct {
		min  uint64
		want bool
	}{{1, true}, {1 << 62, false}} {
		got := HostChecks(HostOptions{Stages: build, Cache: filepath.Join(dir, "a/b"), MinFree: tt.min})
		if len(got) != 1 || got[0].OK != tt.want || !strings.Contains(got[0].Status, " free at "+dir+" ") {
			t.Errorf("MinFree %d: %+v, want ok=%v at %s", tt.min, got, tt.want, dir)
		}
	}
	codediff, _ := ParseStageSet([]string{"codediff"})
	if got := HostChecks(HostOptions{Stages: codediff, Cache: dir}); len(got) != 0 {
		t.Errorf("codediff alone: %+v, want no checks", got)
	}
}

// The checks are the stages' own, in the stages' order, each once: the
// checkout and the builds both need the disk.
func TestHostChecksFromStages(t *testing.T) {
	proc, cgroup := fakeMachine(t, "2", "cpu", "0::/user.slice/mine")
	var got []string
	for _, c := range HostChecks(HostOptions{Cache: t.TempDir(), Proc: proc, Cgroup: cgroup, Euid: 1000}) {
		got = append(got, c.What)
	}
	if d := cmp.Diff([]string{"free disk in the cache", "kernel.perf_event_paranoid", "cgroup v2"}, got); d != "" {
		t.Errorf("every stage's checks (-want +got):\n%s", d)
	}
}
