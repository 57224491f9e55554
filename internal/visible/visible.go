// Package visible owns how patchproof shows the characters of text it does
// not control that a reader would not see as themselves: control
// characters (the ESC that starts an ANSI escape sequence, NUL, DEL, the C1
// controls) and the invisible format characters (bidirectional overrides,
// embeddings, isolates and marks; zero-width spaces and joiners; soft
// hyphens; tag characters) that recolour a terminal or a job log, reorder
// what a reader sees, or hide a character between others. Each becomes its
// code point, <U+202E>, so that the reader sees that it is there and what
// it is. The Markdown and GitHub Actions escapers are built on it.
package visible

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden says whether r is shown as its code point: a control character
// other than tab, line feed and carriage return (whether a line break may
// stay is the context's to say), a line or paragraph separator, or a
// format character (Unicode's Cf, the bidirectional controls and the
// zero-width ones among them).
func Hidden(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || 0x7f <= r && r <= 0x9f:
		return true
	case r == '\u2028' || r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// Name is how r is shown: <U+202E>.
func Name(r rune) string { return fmt.Sprintf("<U+%04X>", r) }

// String is s with every Hidden character as its Name and each byte that is
// not UTF-8 as U+FFFD (which is what a browser shows, and no terminal reads
// as the start of a C1 control). Tab, line feed and carriage return are
// left to the caller.
func String(s string) string {
	if !needs(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if Hidden(r) {
			b.WriteString(Name(r))
			continue
		}
		// An invalid byte ranges as utf8.RuneError, which writes as U+FFFD.
		b.WriteRune(r)
	}
	return b.String()
}

// needs says whether String has anything to change in s.
func needs(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || Hidden(r) {
			return true
		}
		i += size
	}
	return false
}
