// Package hostwatch finds processes that execute code from given
// directories (the builds of a tree under test), and tells those of this
// host from those in containers. Under --builder docker no process of the
// host may: scripts/test watches a Docker-mode run with it, and the e2e
// test reads what it saw.
//
// A process executes code from a directory when its executable lies there,
// when it has a file from there mapped executable (a loaded libphp.so), or
// when it is an interpreter (sh, php, ...) given a script from there. A
// process is a container's when its PID namespace is not the watcher's.
// Sampling /proc misses processes shorter than the interval; the servers
// and suites the check is about live for seconds.
package hostwatch

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A Finding is a process seen executing code from a watched directory.
type Finding struct {
	PID  int    `json:"pid"`
	Exe  string `json:"exe"`
	File string `json:"file"` // what lies in the watched directory
	How  string `json:"how"`  // "exe", "mapped", "script"
	// Container is true for a process in a PID namespace other than the
	// watcher's.
	Container bool `json:"container"`
}

// Report is what a watch saw.
type Report struct {
	Roots   []string `json:"roots"`
	Samples int      `json:"samples"`
	// Host are findings of this host's processes: under --builder docker
	// there must be none; each process and file once. Container are those
	// in containers, each file once (the first process seen with it).
	Host      []Finding `json:"host"`
	Container []Finding `json:"container"`
}

// interpreters run the script their first argument names.
var interpreters = []string{"sh", "bash", "dash", "php", "perl", "python3", "make"}

// Scan looks at every process once and returns those executing code from
// roots (absolute, clean directories).
func Scan(roots []string) []Finding {
	self, _ := os.Readlink("/proc/self/ns/pid")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []Finding
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		f, ok := examine(d, roots)
		if !ok {
			continue
		}
		f.PID = pid
		ns, err := os.Readlink(d + "/ns/pid")
		if err != nil {
			continue // gone meanwhile
		}
		f.Container = ns != self
		out = append(out, f)
	}
	return out
}

func examine(dir string, roots []string) (Finding, bool) {
	exe, err := os.Readlink(dir + "/exe")
	if err != nil {
		return Finding{}, false // a kernel thread, or gone
	}
	exe = strings.TrimSuffix(exe, " (deleted)")
	if under(exe, roots) {
		return Finding{Exe: exe, File: exe, How: "exe"}, true
	}
	if f, ok := mapped(dir+"/maps", roots); ok {
		return Finding{Exe: exe, File: f, How: "mapped"}, true
	}
	if slices.Contains(interpreters, filepath.Base(exe)) {
		cmd, _ := os.ReadFile(dir + "/cmdline")
		args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		cwd, _ := os.Readlink(dir + "/cwd")
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if !filepath.IsAbs(a) {
				a = filepath.Join(cwd, a)
			}
			if under(a, roots) {
				return Finding{Exe: exe, File: a, How: "script"}, true
			}
			break // the first operand is the script
		}
		// make runs the tree's recipes from its working directory.
		if filepath.Base(exe) == "make" && under(cwd, roots) {
			return Finding{Exe: exe, File: cwd, How: "script"}, true
		}
	}
	return Finding{}, false
}

// mapped returns the first file under roots mapped executable.
func mapped(maps string, roots []string) (string, bool) {
	b, err := os.ReadFile(maps)
	if err != nil {
		return "", false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// address perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.Contains(fields[1], "x") {
			continue
		}
		p := strings.Join(fields[5:], " ")
		if under(p, roots) {
			return p, true
		}
	}
	return "", false
}

func under(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// Add records one scan's findings: every host one, and container ones once
// per process and file.
func (r *Report) Add(fs []Finding) {
	r.Samples++
	for _, f := range fs {
		list, same := &r.Host, func(g Finding) bool { return g.PID == f.PID && g.File == f.File }
		if f.Container {
			list, same = &r.Container, func(g Finding) bool { return g.File == f.File }
		}
		if !slices.ContainsFunc(*list, same) {
			*list = append(*list, f)
		}
	}
}

// String sums the report up in a line.
func (r *Report) String() string {
	return fmt.Sprintf("%d samples: %d host processes executed code from %s; in containers, %d files of it ran",
		r.Samples, len(r.Host), strings.Join(r.Roots, ", "), len(r.Container))
}
