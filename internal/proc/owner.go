package proc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Owner is a patchproof process, as the things it leaves behind name it
// (a container's label, a run directory's owner file): HOST/PID/START,
// START being its start time in clock ticks since boot, so that a reused
// PID is not taken for the owner.
type Owner struct {
	Host  string
	PID   int
	Start uint64 // clock ticks after boot, /proc/PID/stat field 22
}

func (o Owner) String() string { return fmt.Sprintf("%s/%d/%d", o.Host, o.PID, o.Start) }

// ParseOwner parses an owner's HOST/PID/START.
func ParseOwner(s string) (Owner, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Owner{}, fmt.Errorf("owner %q: want HOST/PID/START", s)
	}
	pid, err1 := strconv.Atoi(parts[1])
	start, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil || pid <= 0 {
		return Owner{}, fmt.Errorf("owner %q: want HOST/PID/START", s)
	}
	return Owner{Host: parts[0], PID: pid, Start: start}, nil
}

// Self is this process as an owner.
func Self() Owner { return self }

var self = func() Owner {
	host, _ := os.Hostname()
	start, _ := processStart(os.Getpid())
	return Owner{Host: host, PID: os.Getpid(), Start: start}
}()

// Gone reports whether o is a process of this host that has ended: its PID
// is free, or taken by a process that started at another time. A process
// of another host is never gone (it cannot be told from here).
func (o Owner) Gone() bool {
	if o.Host != self.Host {
		return false
	}
	start, err := processStart(o.PID)
	return err != nil || start != o.Start
}

// processStart reads a process's start time from /proc/PID/stat.
func processStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStart(string(b))
}

// parseStart takes field 22, starttime, out of a /proc/PID/stat line.
func parseStart(stat string) (uint64, error) {
	fields, err := statFields(stat)
	if err != nil {
		return 0, err
	}
	const starttime = 22 - 3
	if len(fields) <= starttime {
		return 0, errors.New("stat: too few fields")
	}
	return strconv.ParseUint(fields[starttime], 10, 64)
}

// statFields are the fields of a /proc/PID/stat line from field 3, the
// state, on. The command name (field 2) is in parentheses and may hold
// spaces and parentheses itself: the fields are counted after the last ')'.
func statFields(stat string) ([]string, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, errors.New("stat: no command name")
	}
	return strings.Fields(stat[i+1:]), nil
}
