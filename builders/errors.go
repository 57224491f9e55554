package builders

// The compiler-error scanner: the first errors of a build's output, with
// their place in the source tree, for the report.

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// compilerError matches gcc's "file:line:col: error: message".
var compilerError = regexp.MustCompile(`^(\S+?):(\d+):(?:(\d+):)? (?:fatal )?error: (.*)$`)

// errorScanner passes the build's output through and keeps the first
// compiler errors, with paths made relative to the source tree.
type errorScanner struct {
	w       io.Writer
	root    string
	partial []byte
	errors  []CompileError
}

const maxErrors = 10

func (e *errorScanner) Write(p []byte) (int, error) {
	e.partial = append(e.partial, p...)
	for {
		i := bytes.IndexByte(e.partial, '\n')
		if i < 0 {
			break
		}
		e.scan(string(e.partial[:i]))
		e.partial = e.partial[i+1:]
	}
	return e.w.Write(p)
}

func (e *errorScanner) scan(line string) {
	if len(e.errors) >= maxErrors {
		return
	}
	m := compilerError.FindStringSubmatch(line)
	if m == nil {
		return
	}
	file := strings.TrimPrefix(strings.TrimPrefix(m[1], e.root), "/")
	ln, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	e.errors = append(e.errors, CompileError{File: file, Line: ln, Column: col, Message: m[4]})
}
