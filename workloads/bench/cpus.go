package bench

import (
	"fmt"
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
	rng, stride, hasStride := strings.Cut(item, ":")
	first, last, isRange := strings.Cut(rng, "-")
	if !isRange {
		if hasStride {
			return fmt.Errorf("%q: a stride needs a range", item)
		}
		last = first
	}
	a, err := cpuNumber(first)
	if err != nil {
		return err
	}
	b, err := cpuNumber(last)
	if err != nil {
		return err
	}
	if b < a {
		return fmt.Errorf("%q: the range ends before it begins", item)
	}
	if hasStride {
		if n, err := cpuNumber(stride); err != nil || n == 0 {
			return fmt.Errorf("%q: the stride is not a positive number", item)
		}
	}
	return nil
}

func cpuNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || s != strconv.Itoa(n) {
		return 0, fmt.Errorf("%q is not a CPU number", s)
	}
	return n, nil
}
