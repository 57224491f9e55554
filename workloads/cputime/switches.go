package cputime

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/proc"
)

// Switches counts context switches: voluntary ones (a thread that blocked,
// as on a contended futex) and involuntary ones (a thread the scheduler
// took the CPU from).
type Switches struct {
	Voluntary, Involuntary int64
}

// Sub is the switches between two reads.
func (s Switches) Sub(before Switches) Switches {
	return Switches{s.Voluntary - before.Voluntary, s.Involuntary - before.Involuntary}
}

// TreeSwitches sums the context switches of every thread of root and of
// its descendants, from /proc/PID/task/TID/status. It follows the process
// tree rather than a process group so that it measures a server in a
// container (root: the container's first process, by this host's PID) as
// one on this host. Threads that ended are not counted: the difference of
// two reads is exact for a server whose threads outlive the window, as
// Apache's do with ServerLimit 1.
func TreeSwitches(root int) (Switches, error) {
	pids, err := proc.Tree(root)
	if err != nil {
		return Switches{}, fmt.Errorf("read context switches: %w", err)
	}
	var sum Switches
	for _, pid := range pids {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			continue // exited meanwhile
		}
		for _, t := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
			if err != nil {
				continue
			}
			s, err := parseSwitches(b)
			if err != nil {
				return Switches{}, fmt.Errorf("read context switches: /proc/%d/task/%s/status: %w", pid, t.Name(), err)
			}
			sum.Voluntary += s.Voluntary
			sum.Involuntary += s.Involuntary
		}
	}
	return sum, nil
}

func parseSwitches(b []byte) (Switches, error) {
	var s Switches
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *int64
		switch k {
		case "voluntary_ctxt_switches":
			dst = &s.Voluntary
		case "nonvoluntary_ctxt_switches":
			dst = &s.Involuntary
		default:
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return s, fmt.Errorf("%s: %w", k, err)
		}
		*dst = n
		seen++
	}
	if seen != 2 {
		return s, errors.New("no context switch counts")
	}
	return s, nil
}

// System is what the whole machine's CPUs did so far: the time taken by
// the hypervisor (steal) of all CPU time, and how long some task waited
// for a CPU (pressure stall information).
type System struct {
	// Ticks and Steal are /proc/stat's sums over every CPU, in clock ticks.
	Ticks, Steal int64
	// PressureSome is /proc/pressure/cpu's "some" total; HasPressure is
	// false on a kernel without PSI.
	PressureSome time.Duration
	HasPressure  bool
}

// ReadSystem reads /proc/stat's cpu line and /proc/pressure/cpu.
func ReadSystem() (System, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return System{}, fmt.Errorf("read CPU steal: %w", err)
	}
	sys, err := parseProcStat(b)
	if err != nil {
		return System{}, fmt.Errorf("read CPU steal: /proc/stat: %w", err)
	}
	if p, err := os.ReadFile("/proc/pressure/cpu"); err == nil {
		if d, ok := parsePressureSome(p); ok {
			sys.PressureSome, sys.HasPressure = d, true
		}
	}
	return sys, nil
}

func parseProcStat(b []byte) (System, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	// cpu user nice system idle iowait irq softirq steal [guest guest_nice]:
	// guest time is already inside user, so only the first eight add up.
	if len(f) < 9 || f[0] != "cpu" {
		return System{}, errors.New("no cpu line")
	}
	var s System
	for i := 1; i <= 8; i++ {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return System{}, fmt.Errorf("field %d: %w", i, err)
		}
		s.Ticks += n
		if i == 8 {
			s.Steal = n
		}
	}
	return s, nil
}

func parsePressureSome(b []byte) (time.Duration, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "some ")
		if !ok {
			continue
		}
		for _, kv := range strings.Fields(rest) {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				us, err := strconv.ParseInt(v, 10, 64)
				return time.Duration(us) * time.Microsecond, err == nil
			}
		}
	}
	return 0, false
}

// StealShare is the share of all CPU time stolen between two reads, 0 when
// no time passed.
func StealShare(before, after System) float64 {
	if dt := after.Ticks - before.Ticks; dt > 0 {
		return float64(after.Steal-before.Steal) / float64(dt)
	}
	return 0
}
