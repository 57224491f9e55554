package ghactions

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestEscape(t *testing.T) {
	for _, tt := range []struct {
		name, in, message, property string
	}{
		{"plain", "ext/mysqlnd/mysqlnd.c", "ext/mysqlnd/mysqlnd.c", "ext/mysqlnd/mysqlnd.c"},
		{"lines", "a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"percent first", "100%0A", "100%250A", "100%250A"},
		{"a command inside", "x\n::error::y", "x%0A::error::y", "x%0A%3A%3Aerror%3A%3Ay"},
		{"a property's end", "a.c,line=1::m", "a.c,line=1::m", "a.c%2Cline=1%3A%3Am"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Message(tt.in); got != tt.message {
				t.Errorf("Message = %q, want %q", got, tt.message)
			}
			if got := Property(tt.in); got != tt.property {
				t.Errorf("Property = %q, want %q", got, tt.property)
			}
		})
	}
}

// commands are the workflow commands a runner reads from log, as it
// reads them: a line ends at LF, CR or CRLF; a command is a line that
// starts with "::" once its leading blanks are trimmed; between
// "::stop-commands::TOKEN" and "::TOKEN::" none is read.
func commands(log string) []string {
	var cmds []string
	stopped := ""
	for _, l := range strings.FieldsFunc(log, func(r rune) bool { return r == '\r' || r == '\n' }) {
		l = strings.TrimLeftFunc(l, unicode.IsSpace)
		switch {
		case !strings.HasPrefix(l, "::"):
		case stopped != "":
			if l == "::"+stopped+"::" {
				stopped = ""
			}
		case strings.HasPrefix(l, "::stop-commands::"):
			stopped = strings.TrimPrefix(l, "::stop-commands::")
		default:
			cmds = append(cmds, l)
		}
	}
	return cmds
}

// probes are text from the tree under test that tried to start a command
// of its own, or to colour or reorder the log.
var probes = []string{
	"::set-output name=x::y",
	"a\r::warning::x",
	"a\n  ::error file=x::y\r\n::add-mask::z",
	"\x1b[31mred\x1b[0m",
	"\u202Eexe.txt \u2066x\u2069 \u200b",
	"a\u009b31mb \x00\x7f",
}

// raw are the characters of a probe that must not reach the log as they are.
func raw(s string) []rune {
	var rs []rune
	for _, r := range s {
		if r == 0x1b || r == 0x9b || r == 0 || r == 0x7f || r == '\u202E' || r == '\u2066' || r == '\u2069' || r == '\u200b' {
			rs = append(rs, r)
		}
	}
	return rs
}

// TestProbes: each probe in each place patchproof logs it starts no
// command but patchproof's own, and carries no control, bidirectional
// or zero-width character.
func TestProbes(t *testing.T) {
	for _, p := range probes {
		var doc bytes.Buffer
		fmt.Fprintf(Verbatim(&doc), "# summary\n\n```\n%s\n```\n", p)
		for _, tt := range []struct {
			name, log string
			want      []string
		}{
			{"Line", "    [build 00:01] base/nts: FAILED: " + Line(p) + "\n", nil},
			{"Message", "::warning::" + Message(p) + "\n", []string{"::warning::" + Message(p)}},
			{"Property", "::error file=" + Property(p) + ",line=1::x\n", []string{"::error file=" + Property(p) + ",line=1::x"}},
			{"Verbatim", doc.String(), nil},
		} {
			if got := commands(tt.log); !slices.Equal(got, tt.want) {
				t.Errorf("%s(%q): the log %q starts the commands %q, want %q", tt.name, p, tt.log, got, tt.want)
			}
			if rs := raw(tt.log); tt.name != "Verbatim" && len(rs) > 0 {
				t.Errorf("%s(%q) = %q: holds %q", tt.name, p, tt.log, rs)
			}
		}
	}
}

// TestVerbatim: each write is its text, between a stop and a resume of
// the commands with a token the text cannot know; a write that does not
// end its line is ended.
func TestVerbatim(t *testing.T) {
	var b bytes.Buffer
	w := Verbatim(&b)
	for _, s := range []string{"a\n::error::x\n", "b"} {
		if n, err := io.WriteString(w, s); n != len(s) || err != nil {
			t.Fatalf("write %q: %d, %v", s, n, err)
		}
	}
	lines := strings.Split(b.String(), "\n")
	token := strings.TrimPrefix(lines[0], "::stop-commands::")
	if len(token) < 16 {
		t.Fatalf("token %q: too short to be unguessable", token)
	}
	want := fmt.Sprintf("::stop-commands::%[1]s\na\n::error::x\n::%[1]s::\n::stop-commands::%[1]s\nb\n::%[1]s::\n", token)
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	if other := Verbatim(io.Discard).(*verbatim).token; other == token {
		t.Errorf("two writers share the token %q", token)
	}
}
