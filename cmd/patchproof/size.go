package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/patchproof/patchproof/pipeline/results"
)

var sizeUnits = []struct {
	name string
	size int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// parseSize reads the value s of flag, a number of bytes given plain or in
// KiB, MiB or GiB ("2GiB", "512 MiB").
func parseSize(flag, s string) (int64, error) {
	num, unit := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(num, u.name); ok {
			num, unit = strings.TrimSpace(rest), u.size
			break
		}
	}
	bad := func(why string) error {
		return &results.InputError{Input: strings.TrimSpace(flag + " " + s), Err: errors.New(why)}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, bad("want a number of bytes, or of KiB, MiB or GiB")
	}
	if n > (1<<63-1)/unit {
		return 0, bad("too large")
	}
	return n * unit, nil
}
