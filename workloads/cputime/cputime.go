// Package cputime measures the CPU time a server uses, so that a benchmark
// can divide it by the requests it served.
//
// Two sources exist. A cgroup v2 of the server's own ([NewCgroup]) counts
// every process and thread in it, those that exited included, in its
// cpu.stat; the server is started straight into it (CLONE_INTO_CGROUP, see
// [Cgroup.FD]), so nothing it forks escapes. Where no cgroup v2 hierarchy is
// writable, [ProcessGroup] sums utime+stime (and the cutime+cstime of reaped
// children) from /proc/PID/stat over the processes of the server's process
// group: the same figure to within a clock tick, for a server whose
// processes live as long as the measurement (Apache with ServerLimit 1).
//
// Both satisfy [Meter]; its Source names which one a result came from.
package cputime

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Source names where a CPU time came from.
type Source string

const (
	SourceCgroup2 Source = "cgroup2"
	SourceProc    Source = "proc"
	// SourceContainer is the cgroup of a server's container, as the
	// container engine reads it.
	SourceContainer Source = "container-cgroup"
)

// A Meter reads the CPU time used so far.
type Meter interface {
	Usage() (Usage, error)
	Source() Source
}

// Usage is CPU time used so far: in all, and in user and kernel mode. A
// benchmark wants both halves: a contended lock shows up in the system
// time of futex waits, an uncontended one in user time only.
type Usage struct {
	Total, User, System time.Duration
}

// Sub is the CPU time used between two reads.
func (u Usage) Sub(before Usage) Usage {
	return Usage{u.Total - before.Total, u.User - before.User, u.System - before.System}
}

var (
	_ Meter = (*Cgroup)(nil)
	_ Meter = ProcessGroup(0)
)

// ErrNoCgroup2 is returned by NewCgroup where no writable cgroup v2
// hierarchy is mounted.
var ErrNoCgroup2 = errors.New("no writable cgroup v2 hierarchy")

// Cgroup is a cgroup v2 made for one server.
type Cgroup struct {
	Path string
	fd   *os.File
}

// Cgroup2Mount returns where the cgroup v2 hierarchy is mounted
// (/sys/fs/cgroup on a unified host, /sys/fs/cgroup/unified on a hybrid
// one), from /proc/self/mountinfo.
func Cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		if fs := strings.Fields(post); len(fs) > 0 && fs[0] == "cgroup2" {
			if f := strings.Fields(pre); len(f) >= 5 {
				return unescapeMount(f[4]), nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", ErrNoCgroup2
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// NewCgroup creates a cgroup named name under this process's own cgroup v2
// (or the hierarchy's root when this process sits in the root) and opens it
// for CLONE_INTO_CGROUP. It answers an error wrapping ErrNoCgroup2 when
// there is no hierarchy or it cannot be written.
func NewCgroup(name string) (*Cgroup, error) {
	mount, err := Cgroup2Mount()
	if err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w", name, err)
	}
	parent := filepath.Join(mount, ownCgroup())
	path := filepath.Join(parent, name)
	if err := os.Mkdir(path, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w: %w", path, ErrNoCgroup2, err)
	}
	if _, err := os.Stat(filepath.Join(path, "cpu.stat")); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("create cgroup %s: %w: no cpu.stat", path, ErrNoCgroup2)
	}
	fd, err := os.Open(path)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("create cgroup %s: %w", path, err)
	}
	return &Cgroup{Path: path, fd: fd}, nil
}

// ownCgroup is this process's cgroup v2 path ("0::/path" in
// /proc/self/cgroup), "/" when unknown.
func ownCgroup() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "/"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && p != "" {
			return p
		}
	}
	return "/"
}

// FD is the cgroup directory's descriptor, for SysProcAttr.CgroupFD.
func (c *Cgroup) FD() int { return int(c.fd.Fd()) }

// Source is SourceCgroup2.
func (c *Cgroup) Source() Source { return SourceCgroup2 }

// Usage reads usage_usec, user_usec and system_usec from the cgroup's
// cpu.stat.
func (c *Cgroup) Usage() (Usage, error) {
	b, err := os.ReadFile(filepath.Join(c.Path, "cpu.stat"))
	if err != nil {
		return Usage{}, fmt.Errorf("read cpu time: %w", err)
	}
	var u Usage
	fields := map[string]*time.Duration{"usage_usec": &u.Total, "user_usec": &u.User, "system_usec": &u.System}
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		dst := fields[k]
		if !ok || dst == nil {
			continue
		}
		us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return Usage{}, fmt.Errorf("read cpu time: %s: %w", c.Path, err)
		}
		*dst = time.Duration(us) * time.Microsecond
		found++
	}
	if found != len(fields) {
		return Usage{}, fmt.Errorf("read cpu time: %s/cpu.stat lacks usage_usec, user_usec or system_usec", c.Path)
	}
	return u, nil
}

// Close removes the cgroup, killing what is left in it first (cgroup.kill,
// Linux 5.14+), and waits briefly for it to empty.
func (c *Cgroup) Close() error {
	c.fd.Close()
	var err error
	for i := range 50 {
		if err = os.Remove(c.Path); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if i == 0 {
			os.WriteFile(filepath.Join(c.Path, "cgroup.kill"), []byte("1"), 0)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", c.Path, err)
}

// ProcessGroup measures the processes whose process group is the value.
type ProcessGroup int

// Source is SourceProc.
func (ProcessGroup) Source() Source { return SourceProc }

// clockTick is USER_HZ, which the kernel's ABI fixes at 100 on the
// architectures patchproof runs on.
const clockTick = 10 * time.Millisecond

// Usage sums utime and stime (with the cutime and cstime of reaped
// children) of every process in the group.
func (g ProcessGroup) Usage() (Usage, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return Usage{}, fmt.Errorf("read cpu time: %w", err)
	}
	var user, sys int64
	found := false
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // exited meanwhile
		}
		st, err := parseStat(string(b))
		if err != nil {
			return Usage{}, fmt.Errorf("read cpu time: /proc/%d/stat: %w", pid, err)
		}
		if st.pgrp != int(g) {
			continue
		}
		found = true
		user += st.utime + st.cutime
		sys += st.stime + st.cstime
	}
	if !found {
		return Usage{}, fmt.Errorf("read cpu time: no process in group %d", int(g))
	}
	u := Usage{User: time.Duration(user) * clockTick, System: time.Duration(sys) * clockTick}
	u.Total = u.User + u.System
	return u, nil
}

type stat struct {
	pgrp                         int
	utime, stime, cutime, cstime int64
}

// parseStat reads /proc/PID/stat. The command name, field 2, is in
// parentheses and may hold spaces and parentheses: the fields that follow
// start after its last ')'.
func parseStat(s string) (stat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, errors.New("no command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); pgrp is field 5, utime..cstime 14..17.
	if len(f) < 15 {
		return stat{}, fmt.Errorf("%d fields", len(f)+2)
	}
	var st stat
	var err error
	num := func(field int) int64 {
		v, e := strconv.ParseInt(f[field-3], 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("field %d: %w", field, e)
		}
		return v
	}
	st.pgrp = int(num(5))
	st.utime, st.stime, st.cutime, st.cstime = num(14), num(15), num(16), num(17)
	return st, err
}
