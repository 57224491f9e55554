package cputime

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, line string
		want       stat
		err        bool
	}{
		{"plain", "1234 (apache2) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 3 4 20 0 18 0 100 0 0",
			stat{pgrp: 1234, utime: 250, stime: 50, cutime: 3, cstime: 4}, false},
		{"name with spaces and parens", "77 (a b) (c)) R 1 900 900 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0",
			stat{pgrp: 900, utime: 1, stime: 2, cutime: 3, cstime: 4}, false},
		{"truncated", "77 (x) R 1 2 3", stat{}, true},
		{"no name", "77 x R", stat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat(tt.line)
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want error %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(stat{})); !tt.err && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/sys/fs/a\040b`); got != "/sys/fs/a b" {
		t.Errorf("got %q", got)
	}
}

// spin starts a shell that burns CPU for d in a process group of its own,
// in the cgroup fd when positive.
func spin(t *testing.T, d time.Duration, cgroupFD int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", fmt.Sprintf(`end=$(($(date +%%s%%N) + %d)); while [ $(date +%%s%%N) -lt $end ]; do :; done`, d.Nanoseconds()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cgroupFD > 0 {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = cgroupFD
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// The two meters agree on a process that burns about half a second of CPU
// (date forks: the children's time must count too).
func TestMetersAgree(t *testing.T) {
	cg, err := NewCgroup(fmt.Sprintf("patchproof-test-%d", time.Now().UnixNano()))
	if errors.Is(err, ErrNoCgroup2) {
		t.Skipf("no cgroup v2 here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	cmd := spin(t, 500*time.Millisecond, cg.FD())
	pg := ProcessGroup(cmd.Process.Pid)
	time.Sleep(400 * time.Millisecond)
	c1, err1 := cg.Usage()
	p1, err2 := pg.Usage()
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if c1.Total < 100*time.Millisecond {
		t.Errorf("cgroup: %v after 400ms of spinning", c1.Total)
	}
	for _, u := range []Usage{c1, p1} {
		// A clock tick of rounding per process in /proc's halves.
		if d := u.Total - u.User - u.System; d < -20*time.Millisecond || d > 20*time.Millisecond {
			t.Errorf("user %v + system %v is not the total %v", u.User, u.System, u.Total)
		}
		if u.User <= 0 {
			t.Errorf("a spinning shell used no user time: %+v", u)
		}
	}
	// The shell's children are reaped by the shell and land in its cutime:
	// both sources count them, within a few clock ticks and the time
	// between the two reads.
	if diff := c1.Total - p1.Total; diff < -50*time.Millisecond || diff > 50*time.Millisecond {
		t.Errorf("cgroup %v and /proc %v disagree", c1, p1)
	}
	cmd.Wait()
	if got := cg.Source(); got != SourceCgroup2 {
		t.Errorf("source %s", got)
	}
	if _, err := pg.Usage(); err == nil {
		t.Error("/proc usage of a finished group: no error")
	}
}
