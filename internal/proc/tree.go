package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Tree is root and the processes descended from it, root first, the
// others in order, as /proc shows them now: a server's processes whether
// or not they share its process group, and a container's by its first
// process's PID on this host. A root that does not exist is an error.
func Tree(root int) ([]int, error) {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", root)); err != nil {
		return nil, fmt.Errorf("process %d: %w", root, err)
	}
	children := map[int][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue // ended since the glob
		}
		f, err := statFields(string(b))
		if err != nil || len(f) < 2 {
			continue
		}
		// f[0] is field 3 (state), f[1] field 4 (the parent's PID).
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var desc []int
	for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			if c != root && !slices.Contains(desc, c) {
				desc = append(desc, c)
				queue = append(queue, c)
			}
		}
	}
	slices.Sort(desc)
	return append([]int{root}, desc...), nil
}
