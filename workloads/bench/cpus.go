package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// usableCPUs lists the CPUs this process may run on, in order.
func usableCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// cpuList writes CPUs as a taskset list: "1", "0,2".
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// CheckCPUList rejects a CPU list that taskset -c would not take: a
// comma-separated list of CPUs and ranges ("0,5,7-11", "0-10:2"). The
// lists are pinned with taskset, so what is checked here is what runs.
func CheckCPUList(s string) error {
	if s == "" {
		return fmt.Errorf("empty CPU list")
	}
	for _, item := range strings.Split(s, ",") {
		if err := checkCPURange(item); err != nil {
			return fmt.Errorf("not a CPU list (as 0,5,7-11 or 0-10:2): %w", err)
		}
	}
	return nil
}

func checkCPURange(item string) error {
	_, _, _, err := cpuRange(item)
	return err
}

// cpuRange reads one item of a CPU list: its first and last CPU and the
// stride between them (1 unless given).
func cpuRange(item string) (first, last, step int, err error) {
	rng, stride, hasStride := strings.Cut(item, ":")
	from, to, isRange := strings.Cut(rng, "-")
	if !isRange {
		if hasStride {
			return 0, 0, 0, fmt.Errorf("%q: a stride needs a range", item)
		}
		to = from
	}
	if first, err = cpuNumber(from); err != nil {
		return 0, 0, 0, err
	}
	if last, err = cpuNumber(to); err != nil {
		return 0, 0, 0, err
	}
	if last < first {
		return 0, 0, 0, fmt.Errorf("%q: the range ends before it begins", item)
	}
	step = 1
	if hasStride {
		if step, err = cpuNumber(stride); err != nil || step == 0 {
			return 0, 0, 0, fmt.Errorf("%q: the stride is not a positive number", item)
		}
	}
	return first, last, step, nil
}

// CheckCPUsUsable rejects a CPU list (one CheckCPUList takes) naming a CPU
// this process may not run on: offline, absent, or outside its affinity
// (a container's cpuset). taskset would refuse it only once the builds
// are done and the benchmark starts.
func CheckCPUsUsable(s string) error { return checkCPUsIn(s, usableCPUs()) }

func checkCPUsIn(s string, usable []int) error {
	if len(usable) == 0 {
		return nil // the affinity is unknown: taskset will say
	}
	for _, item := range strings.Split(s, ",") {
		first, last, step, err := cpuRange(item)
		if err != nil {
			return fmt.Errorf("not a CPU list (as 0,5,7-11 or 0-10:2): %w", err)
		}
		// Stops at the first CPU that is not usable, so a huge range
		// costs no more than the usable CPUs.
		for n := first; n <= last; n += step {
			if _, ok := slices.BinarySearch(usable, n); !ok {
				return fmt.Errorf("CPU %d is not one this machine lets patchproof run on (usable: %s)", n, cpuRanges(usable))
			}
		}
	}
	return nil
}

// cpuRanges writes CPUs compactly, as "0-3,8".
func cpuRanges(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			fmt.Fprintf(&b, "%d", cpus[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		}
		i = j + 1
	}
	return b.String()
}

func cpuNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || s != strconv.Itoa(n) {
		return 0, fmt.Errorf("%q is not a CPU number", s)
	}
	return n, nil
}
