package proc

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// HostPID translates nspid, a process ID as seen in the PID namespace of
// process member (a container's first process, by this host's PID), into
// this host's PID of the same process: what a program in a container
// writes down as its getpid() is found again from here. It reads /proc:
// the namespace of each process, and the last of its NSpid IDs (its ID in
// its own namespace).
func HostPID(member, nspid int) (int, error) {
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", member))
	if err != nil {
		return 0, fmt.Errorf("PID namespace of %d: %w", member, err)
	}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		if l, err := os.Readlink(d + "/ns/pid"); err != nil || l != ns {
			continue
		}
		if id, ok := nsPID(d + "/status"); ok && id == nspid {
			return strconv.Atoi(filepath.Base(d))
		}
	}
	return 0, fmt.Errorf("no process %d in the PID namespace of %d", nspid, member)
}

// nsPID is the innermost ID of a process, from the NSpid line of its
// /proc status.
func nsPID(status string) (int, bool) {
	f, err := os.Open(status)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "NSpid:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return 0, false
			}
			id, err := strconv.Atoi(fields[len(fields)-1])
			return id, err == nil
		}
	}
	return 0, false
}
