package httpd

// Reading a server's error log: the signals that ended its children,
// and its last lines when a load fails. PHP's code, the tree's, writes
// into the log: every read is through safefs and bounded.

import (
	"bufio"
	"errors"
	"io"
	"regexp"
	"strings"

	"github.com/patchproof/patchproof/internal/safefs"
)

// childSignal is how Apache's parent logs a child that a signal ended
// (AH00050, AH00051, AH00052): "child pid 42 exit signal Segmentation
// fault (11)", with ", possible coredump in DIR" after it when it dumped.
var childSignal = regexp.MustCompile(`child pid \d+ exit signal (.+? \(\d+\))`)

// ChildSignals returns the signals that ended Apache's children, as Apache
// names them, one per child, read from the error log: a crash of PHP in
// the server, while it served or as it shut down. Called after Stop, it
// covers the server's whole life, and only this server's: the lines of an
// earlier one in the same directory are not read. ok is false for a
// single-process server, whose parent is the child, and when the log
// cannot be read: then nothing is known.
func (s *Server) ChildSignals() (signals []string, ok bool) {
	if s.opt.SingleProcess {
		return nil, false
	}
	// PHP's code, the tree's, writes into the log and runs as the user
	// of the server's directory: no link as its name.
	f, err := safefs.OpenPath(s.ErrorLog)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if _, err := f.Seek(s.logStart, io.SeekStart); err != nil {
		return nil, false
	}
	// Line by line: PHP's own messages can make the log large. The tree's
	// code writes it: what is read has a bound, past which the log is not
	// read (a crash after it would be hidden), and a line too long to be
	// Apache's own is passed over, not the end of the reading.
	r := bufio.NewReaderSize(io.LimitReader(f, maxLogScan+1), 64<<10)
	var read int64
	for {
		line, err := r.ReadSlice('\n')
		read += int64(len(line))
		if m := childSignal.FindSubmatch(line); m != nil && len(signals) < maxChildSignals {
			signals = append(signals, string(m[1]))
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // the rest of a long line
				line, err = r.ReadSlice('\n')
				read += int64(len(line))
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false
		}
	}
	if read > maxLogScan {
		return nil, false
	}
	return signals, true
}

// Bounds on reading an error log for its children's signals: far more
// than a benchmark's servers log, which is a few KB.
const (
	maxLogScan      = 256 << 20
	maxChildSignals = 10000
)

// LogTail returns the last lines of this server's error log and output,
// naming the log: what a failed load is reported with.
func (s *Server) LogTail() string { return s.logSince(s.logStart) }

// logTailBytes is how much of a log's end logSince reads.
const logTailBytes = 1 << 20

// logSince returns what the error log gained after offset, trimmed to its
// last lines.
func (s *Server) logSince(offset int64) string {
	var b []byte
	if f, err := safefs.OpenPath(s.ErrorLog); err == nil {
		// The end is what says why: at most its last MiB.
		if fi, err := f.Stat(); err == nil {
			offset = max(offset, fi.Size()-logTailBytes)
		}
		f.Seek(offset, io.SeekStart)
		b, _ = io.ReadAll(io.LimitReader(f, logTailBytes))
		f.Close()
	}
	// What apache2 printed before it had an error log: configuration errors.
	out, _ := safefs.ReadFile(s.Dir, outName, logTailBytes)
	text := strings.TrimSpace(lastLines(string(out), 5) + "\n" + string(b))
	if text == "" {
		return "nothing in " + s.ErrorLog
	}
	return s.ErrorLog + ":\n" + lastLines(text, 15)
}
