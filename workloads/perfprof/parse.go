package perfprof

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
)

// A Frame is one function of a call stack.
type Frame struct {
	// Name is the symbol perf resolved; where it resolved none, the DSO's
	// base name in brackets ("[libc.so.6]") or "[unknown]", as Brendan
	// Gregg's stackcollapse-perf.pl names them. Not the address: a frame
	// per address would split one unknown function into as many frames as
	// it has instructions.
	Name string
	// DSO is the object the address is in, as perf names it
	// ("/usr/lib/x86_64-linux-gnu/libc.so.6", "[kernel.kallsyms]"), or
	// "[unknown]".
	DSO string
	// Kernel is whether the address is the kernel's.
	Kernel bool
}

// Folded is the frame's name in folded stacks: kernel frames carry the
// "_[k]" that stackcollapse-perf.pl --kernel gives them, so that a reader
// (and flamegraph.pl) tells a syscall's work from the user code that made
// it.
func (f Frame) Folded() string {
	if f.Kernel {
		return f.Name + "_[k]"
	}
	return f.Name
}

// A Stack is a distinct call stack and how many samples had it.
type Stack struct {
	Comm   string  // the thread's command name
	Frames []Frame // outermost first, the leaf (the function on the CPU) last
	Count  int
}

// Folded is the stack as a folded line without its count: "comm;a;b;c".
func (s Stack) Folded() string {
	var b strings.Builder
	b.WriteString(s.Comm)
	for _, f := range s.Frames {
		b.WriteByte(';')
		b.WriteString(f.Folded())
	}
	return b.String()
}

// Stacks are the samples of a profile, one entry per distinct stack,
// sorted by their folded lines so that what is written from them is
// reproducible.
type Stacks struct {
	Stacks  []Stack
	Samples int // the sum of the Counts
}

// Parse reads perf script's text of samples recorded with call stacks
// (perf record -g; perf script -F comm,tid,ip,sym,dso): per sample a
// header line "COMM TID", then a line per frame, leaf first,
// "ADDRESS SYMBOL (DSO)", then a blank line. Other fields on the header
// line (a time, a CPU) are not read and must not be asked for: a command
// name may hold spaces, so only the last field is taken off it.
func Parse(r io.Reader) (*Stacks, error) {
	sc := bufio.NewScanner(r)
	// A C++ frame's demangled name can be many kilobytes long.
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	index := map[string]int{}
	var s Stacks
	var cur *Stack
	flush := func() {
		if cur == nil {
			return
		}
		slices.Reverse(cur.Frames)
		key := stackKey(cur)
		if i, ok := index[key]; ok {
			s.Stacks[i].Count++
		} else {
			index[key] = len(s.Stacks)
			cur.Count = 1
			s.Stacks = append(s.Stacks, *cur)
		}
		s.Samples++
		cur = nil
	}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case strings.TrimSpace(text) == "":
			flush()
		case text[0] == ' ' || text[0] == '\t':
			if cur == nil {
				return nil, fmt.Errorf("parse perf script line %d: a frame outside a sample: %q", line, text)
			}
			f, err := parseFrame(text)
			if err != nil {
				return nil, fmt.Errorf("parse perf script line %d: %w", line, err)
			}
			cur.Frames = append(cur.Frames, f)
		default:
			flush()
			comm, err := parseHeader(text)
			if err != nil {
				return nil, fmt.Errorf("parse perf script line %d: %w", line, err)
			}
			cur = &Stack{Comm: comm}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parse perf script: %w", err)
	}
	flush()
	sortStacks(s.Stacks)
	return &s, nil
}

// sortStacks orders stacks by their folded lines, then by DSOs.
func sortStacks(stacks []Stack) {
	type keyed struct {
		folded, key string
		s           Stack
	}
	ks := make([]keyed, len(stacks))
	for i, st := range stacks {
		ks[i] = keyed{st.Folded(), stackKey(&st), st}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := strings.Compare(a.folded, b.folded); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	for i := range ks {
		stacks[i] = ks[i].s
	}
}

// stackKey tells stacks apart that fold alike but differ in a frame's DSO:
// they are one in a flame graph and two in Top.
func stackKey(s *Stack) string {
	var b strings.Builder
	b.WriteString(s.Comm)
	for _, f := range s.Frames {
		fmt.Fprintf(&b, "\x00%s\x00%s\x00%t", f.Name, f.DSO, f.Kernel)
	}
	return b.String()
}

// parseHeader takes the command name off a sample's first line,
// "COMM TID".
func parseHeader(text string) (string, error) {
	text = strings.TrimSpace(text)
	i := strings.LastIndexAny(text, " \t")
	if i < 0 {
		return "", fmt.Errorf("sample header %q: want COMM TID", text)
	}
	if _, err := strconv.Atoi(text[i+1:]); err != nil {
		return "", fmt.Errorf("sample header %q: want COMM TID", text)
	}
	return strings.TrimSpace(text[:i]), nil
}

// parseFrame reads "ADDRESS SYMBOL (DSO)". The symbol may hold spaces and
// parentheses ("foo(int) const"), and so may the DSO ("/x (deleted)"):
// the DSO is the last balanced parenthesised group.
func parseFrame(text string) (Frame, error) {
	text = strings.TrimSpace(text)
	addr, rest, _ := strings.Cut(text, " ")
	ip, err := strconv.ParseUint(addr, 16, 64)
	if err != nil {
		return Frame{}, fmt.Errorf("frame %q: address %q is not hexadecimal", text, addr)
	}
	rest = strings.TrimSpace(rest)
	sym, dso := rest, "[unknown]"
	if open := openingParen(rest); open >= 0 {
		sym, dso = strings.TrimSpace(rest[:open]), rest[open+1:len(rest)-1]
	}
	// "pthread_mutex_lock@@GLIBC_2.2.5": the default version of a symbol
	// is the symbol, and one name per function is what merges stacks.
	sym, _, _ = strings.Cut(sym, "@@")
	f := Frame{Name: sym, DSO: dso, Kernel: isKernel(ip, dso)}
	if f.Name == "" || f.Name == "[unknown]" {
		f.Name = "[unknown]"
		if dso != "[unknown]" && dso != "" {
			f.Name = "[" + strings.Trim(path.Base(dso), "[]") + "]"
		}
	}
	return f, nil
}

// openingParen is the index of the '(' that the closing ')' at the end of
// s matches, or -1.
func openingParen(s string) int {
	if !strings.HasSuffix(s, ")") {
		return -1
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// isKernel: on the 64-bit machines this runs on (x86-64, arm64) the kernel
// lives in the upper half of the address space; the DSO catches what
// perf names the kernel's without an address there.
func isKernel(ip uint64, dso string) bool {
	return ip>>63 == 1 || strings.HasPrefix(dso, "[kernel.")
}

// WriteFolded writes the stacks in Brendan Gregg's folded format, a line
// per distinct stack, "comm;outer;...;leaf COUNT", which flamegraph.pl,
// speedscope and inferno read.
func (s *Stacks) WriteFolded(w io.Writer) error {
	bw := bufio.NewWriter(w)
	// Stacks that differ only in a DSO fold to one line.
	var last string
	n := 0
	for i, st := range s.Stacks {
		f := st.Folded()
		if i > 0 && f != last {
			fmt.Fprintf(bw, "%s %d\n", last, n)
			n = 0
		}
		last = f
		n += st.Count
	}
	if len(s.Stacks) > 0 {
		fmt.Fprintf(bw, "%s %d\n", last, n)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write folded stacks: %w", err)
	}
	return nil
}
