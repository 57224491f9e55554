package race

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A Report is one ThreadSanitizer warning.
type Report struct {
	// Kind is what TSan found: "data race", "heap-use-after-free",
	// "lock-order-inversion (potential deadlock)", ...
	Kind string `json:"kind"`
	// Summary is TSan's SUMMARY line, less its "SUMMARY: ThreadSanitizer: ".
	Summary string `json:"summary"`
	// Accesses are the conflicting accesses, the current one first.
	Accesses []Access `json:"accesses"`
	// Location says what memory it was ("heap block of size 1224 ...").
	Location string `json:"location,omitempty"`
	// File is the source file the report is attributed to: the first frame
	// of the accesses that lies in the source tree, relative to it.
	File string `json:"file,omitempty"`
	// Count is how many times a report with this signature was seen.
	Count int `json:"count"`
}

// An Access is one side of a race: what was done, by which thread, where.
type Access struct {
	What  string  `json:"what"` // "Write of size 8 at 0x7b0c00002e48 by thread T5"
	Stack []Frame `json:"stack"`
}

// A Frame is one line of a stack.
type Frame struct {
	Func   string `json:"func"`
	File   string `json:"file,omitempty"` // relative to the source tree where it lies in it
	Line   int    `json:"line,omitempty"`
	Module string `json:"module,omitempty"` // the shared object, for frames without source
	// Offset is the frame's address in Module, for frames the runtime could
	// not name (a Symbolizer names them).
	Offset uint64 `json:"offset,omitempty"`
}

// A Symbolizer names frames the TSan runtime left unnamed: for a module (the
// base name TSan printed, "libphp.so") and offsets in it, it returns a frame
// per offset it could name, with File as the compiler recorded it.
type Symbolizer func(module string, offsets []uint64) (map[uint64]Frame, error)

func (f Frame) String() string {
	switch {
	case f.File != "" && f.Line > 0:
		return fmt.Sprintf("%s %s:%d", f.Func, f.File, f.Line)
	case f.File != "":
		return f.Func + " " + f.File
	case f.Module != "" && f.Func == "":
		return fmt.Sprintf("%s+%#x", f.Module, f.Offset)
	case f.Module != "":
		return f.Func + " (" + f.Module + ")"
	}
	return f.Func
}

// sourceDirs are php-src's top-level directories: a file path is made
// relative to the tree at the first of them, so that reports of builds made
// in different directories compare equal.
var sourceDirs = []string{"/Zend/", "/main/", "/ext/", "/sapi/", "/TSRM/"}

// relSource returns path relative to the php-src tree it lies in, and
// whether it does.
func relSource(path string) (string, bool) {
	best := -1
	for _, d := range sourceDirs {
		if i := strings.Index(path, d); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		return path, false
	}
	return path[best+1:], true
}

var (
	warningLine = regexp.MustCompile(`^WARNING: ThreadSanitizer: (.+?)(?: \(pid=\d+\))?\s*$`)
	// "#3 php_mysqlnd_rowp_read /b/ext/mysqlnd/mysqlnd_wireprotocol.c:1624 (libphp.so+0x5b1e2)"
	// "#0 apr_thread_mutex_lock <null> (libapr-1.so.0+0x2b3a0)"
	frameLine = regexp.MustCompile(`^#\d+\s+(\S+)\s+(\S+?)(?::(\d+))?(?::\d+)?\s+\(([^)+]+)(?:\+0x([0-9a-f]+))?\)\s*$`)
	// An access: "Write of size 8 at 0x... by thread T5:", "Previous
	// atomic read of size 8 ...", "Read of size 8 at 0x... by main thread
	// (mutexes: write M1):".
	accessLine = regexp.MustCompile(`^(?:Previous )?(?i:atomic )?(?i:read|write) of size \d+ at 0x[0-9a-f]+ by `)
	addrs      = regexp.MustCompile(`0x[0-9a-f]+`)
)

// Parse reads ThreadSanitizer's output (a log_path file, or stderr with
// other output around it) and returns its reports in order, those with the
// same signature merged into one with a count. Frames the runtime left
// unnamed are named by sym, when given, before reports are compared.
func Parse(data []byte, sym Symbolizer) ([]Report, error) {
	raw, err := parseRaw(data)
	if err != nil {
		return nil, err
	}
	if sym != nil {
		if err := symbolize(raw, sym); err != nil {
			return nil, err
		}
	}
	var reports []Report
	index := map[string]int{}
	for _, r := range raw {
		r.File = attribute(r.Accesses)
		// The runtime's SUMMARY names an unnamed frame by its address: say
		// it as the runtime would have, from the frame as named now.
		if len(r.Accesses) > 0 && len(r.Accesses[0].Stack) > 0 {
			if f := r.Accesses[0].Stack[0]; f.Func != "" && f.File != "" && strings.Contains(r.Summary, "+0x") {
				r.Summary = fmt.Sprintf("%s %s:%d in %s", r.Kind, f.File, f.Line, f.Func)
			}
		}
		sig := r.Signature()
		if i, ok := index[sig]; ok {
			reports[i].Count++
			continue
		}
		r.Count = 1
		index[sig] = len(reports)
		reports = append(reports, r)
	}
	return reports, nil
}

// symbolize names the unnamed frames of every report, a module at a time.
func symbolize(reports []Report, sym Symbolizer) error {
	want := map[string][]uint64{}
	for _, r := range reports {
		for _, a := range r.Accesses {
			for _, f := range a.Stack {
				if f.Func == "" && f.Module != "" && !slices.Contains(want[f.Module], f.Offset) {
					want[f.Module] = append(want[f.Module], f.Offset)
				}
			}
		}
	}
	names := map[string]map[uint64]Frame{}
	for _, mod := range slices.Sorted(maps.Keys(want)) {
		got, err := sym(mod, want[mod])
		if err != nil {
			return fmt.Errorf("symbolize %s: %w", mod, err)
		}
		names[mod] = got
	}
	for ri := range reports {
		for ai := range reports[ri].Accesses {
			stack := reports[ri].Accesses[ai].Stack
			for fi, f := range stack {
				if n, ok := names[f.Module][f.Offset]; ok && f.Func == "" {
					n.File, _ = relSource(n.File)
					n.Module, n.Offset = f.Module, f.Offset
					stack[fi] = n
				}
			}
		}
	}
	return nil
}

// parseRaw splits TSan's output into reports, frames as printed.
func parseRaw(data []byte) ([]Report, error) {
	var (
		reports []Report
		cur     *Report
		section *[]Frame // where the next frames go
	)
	flush := func() {
		if cur != nil {
			reports = append(reports, *cur)
		}
		cur, section = nil, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if m := warningLine.FindStringSubmatch(line); m != nil {
			flush()
			cur = &Report{Kind: m[1]}
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case line == "==================":
			flush()
		case strings.HasPrefix(line, "SUMMARY: ThreadSanitizer: "):
			cur.Summary = stripPaths(strings.TrimPrefix(line, "SUMMARY: ThreadSanitizer: "))
		case strings.HasPrefix(line, "#"):
			if section == nil {
				continue
			}
			m := frameLine.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("tsan report %q: frame %q not understood", cur.Kind, line)
			}
			f := Frame{Func: m[1]}
			if f.Func == "<null>" {
				f.Func = ""
			}
			if m[2] != "<null>" {
				f.File, _ = relSource(m[2])
				f.Line, _ = strconv.Atoi(m[3])
			} else {
				f.Module = m[4]
				f.Offset, _ = strconv.ParseUint(m[5], 16, 64)
			}
			*section = append(*section, f)
		case accessLine.MatchString(line):
			cur.Accesses = append(cur.Accesses, Access{What: strings.TrimSuffix(line, ":")})
			section = &cur.Accesses[len(cur.Accesses)-1].Stack
		case strings.HasPrefix(line, "Location is "):
			cur.Location = strings.TrimSuffix(addrs.ReplaceAllString(line, "0x…"), ":")
			section = nil
		case line == "":
		default:
			// Mutex and thread creation sections: not part of a race's
			// identity, and their stacks are the server's.
			section = nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tsan output: %w", err)
	}
	flush()
	return reports, nil
}

// stripPaths makes the paths in a SUMMARY line relative to the source tree.
func stripPaths(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if strings.HasPrefix(w, "/") {
			words[i], _ = relSource(w)
		}
	}
	return strings.Join(words, " ")
}

// attribute returns the first source-tree file in the accesses' stacks.
func attribute(acc []Access) string {
	for _, a := range acc {
		for _, f := range a.Stack {
			if f.File != "" && !strings.HasPrefix(f.File, "/") {
				return f.File
			}
		}
	}
	return ""
}

// signatureFrames is how many top frames of each access identify a race.
const signatureFrames = 4

// Signature identifies a report across runs and builds: its kind and the
// top frames (function and file, not line: a change moves lines) of each
// access, in an order that does not depend on which thread came second.
func (r Report) Signature() string {
	var sides []string
	for _, a := range r.Accesses {
		var fs []string
		for i, f := range a.Stack {
			if i == signatureFrames {
				break
			}
			id := f.Func + "@" + f.File
			if f.Func == "" {
				// Unnamed: only its address identifies it.
				id = fmt.Sprintf("%s+%#x", f.Module, f.Offset)
			} else if f.File == "" {
				id += f.Module
			}
			fs = append(fs, id)
		}
		sides = append(sides, opOf(a.What)+" "+strings.Join(fs, " < "))
	}
	slices.Sort(sides)
	return r.Kind + ": " + strings.Join(sides, " | ")
}

// opOf is an access's kind without address and thread: "write of size 8".
func opOf(what string) string {
	w := strings.ToLower(strings.TrimPrefix(what, "Previous "))
	if i := strings.Index(w, " at 0x"); i >= 0 {
		w = w[:i]
	}
	return w
}
