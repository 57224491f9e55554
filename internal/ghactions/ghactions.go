// Package ghactions owns what patchproof writes into a GitHub Actions job
// log: the escapes of its workflow commands (::error::, ::warning::,
// ::notice::), of text on a line of its own, and of a document printed
// whole. The runner reads a command from any line that starts with "::"
// (after blanks), and a CR ends a line as LF does; much of what patchproof
// logs comes from the tree under test (a compiler message, a file name, a
// test's name), which must start no command, recolour no line (an ANSI
// escape) and reorder none (a bidirectional control).
package ghactions

import (
	"crypto/rand"
	"io"
	"strings"

	"github.com/patchproof/patchproof/internal/visible"
)

var (
	message  = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	property = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
	line     = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ")
)

// Message escapes a command's message: %, CR and LF, which the runner
// decodes; and the control, bidirectional and zero-width characters,
// shown as their code points (package visible).
func Message(s string) string { return message.Replace(visible.String(s)) }

// Property escapes a property's value (file=, line=): a message's
// escapes, and the ':' and ',' that end a value.
func Property(s string) string { return property.Replace(visible.String(s)) }

// Line is s for a line that patchproof starts (a progress line, an error
// after "patchproof: "): on that line, each line break (CR, LF or CRLF)
// a space, so that nothing of s starts a line of its own and with it a
// command; and its control, bidirectional and zero-width characters shown
// as their code points.
func Line(s string) string { return visible.String(line.Replace(s)) }

// Verbatim is w with the runner's workflow commands stopped around each
// write: a document printed whole (the summary, a dry run's comment), whose
// lines patchproof does not start and may hold a line of a test's diff,
// reads as text, whatever line starts "::". The token that resumes them is
// random, so that no text can resume them early.
func Verbatim(w io.Writer) io.Writer {
	return &verbatim{w: w, token: rand.Text()}
}

type verbatim struct {
	w     io.Writer
	token string
}

func (v *verbatim) Write(p []byte) (int, error) {
	var b strings.Builder
	b.Grow(len(p) + 2*len(v.token) + 24)
	b.WriteString("::stop-commands::" + v.token + "\n")
	b.Write(p)
	if len(p) > 0 && p[len(p)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("::" + v.token + "::\n")
	if _, err := io.WriteString(v.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
