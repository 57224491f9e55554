package race

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/patchproof/patchproof/internal/childenv"
)

// Addr2Line returns a Symbolizer that names frames of the given modules
// (the base name TSan prints → the file) with binutils' addr2line, from
// the modules' debug information. The TSan runtime inside a server that
// dropped its privileges cannot start a symbolizer of its own, so its
// reports name only the module and offset.
func Addr2Line(ctx context.Context, modules map[string]string) Symbolizer {
	return func(module string, offsets []uint64) (map[uint64]Frame, error) {
		path, ok := modules[module]
		if !ok || len(offsets) == 0 {
			return nil, nil
		}
		args := []string{"-f", "-e", path}
		for _, o := range offsets {
			args = append(args, fmt.Sprintf("%#x", o))
		}
		var out, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "addr2line", args...)
		cmd.Env = childenv.For(childenv.Tool)
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("addr2line -e %s: %v: %s", path, err, strings.TrimSpace(stderr.String()))
		}
		return parseAddr2Line(out.Bytes(), offsets)
	}
}

// parseAddr2Line reads addr2line -f's answer: a function line and a
// "file:line" line per offset, "??" where it knows nothing.
func parseAddr2Line(out []byte, offsets []uint64) (map[uint64]Frame, error) {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 2*len(offsets) {
		return nil, fmt.Errorf("addr2line: %d lines for %d addresses", len(lines), len(offsets))
	}
	frames := map[uint64]Frame{}
	for i, o := range offsets {
		fn, loc := lines[2*i], lines[2*i+1]
		if fn == "??" {
			continue
		}
		f := Frame{Func: fn}
		loc, _, _ = strings.Cut(loc, " (discriminator")
		if file, line, ok := strings.Cut(loc, ":"); ok && file != "??" {
			f.File = file
			f.Line, _ = strconv.Atoi(line)
		}
		frames[o] = f
	}
	return frames, nil
}
