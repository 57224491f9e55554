// Package markdown owns how patchproof puts text into GitHub-flavoured
// Markdown: inline text that cannot break a table row or open an HTML tag,
// code spans and fenced code blocks that hold any backticks, and the anchors
// GitHub gives headings. Every report section escapes through it, so that a
// test name, a compiler message or a branch name renders as itself.
package markdown

import (
	"html"
	"strings"
	"unicode/utf8"

	"github.com/patchproof/patchproof/internal/visible"
)

// wj is U+2060 WORD JOINER: invisible, and enough to keep GitHub from
// reading "@name" as a mention, "#123" as a reference, or a bare
// "https://" or "www." as a link.
const wj = "\u2060"

// Text makes s, text that patchproof does not control (a commit subject,
// a test's name or skip reason, a branch, a compiler message, a function
// name), safe as inline Markdown on one line and in a table cell. It is the
// one function for such text: no line breaks (CR, LF and CRLF are spaces)
// and no column separators; no HTML (< and > are entities, so no tag,
// autolink or quote opens); no character reference (& is &amp;, so
// "&commat;" or "&#64;" cannot become an @); no link or image ([ and ]
// escaped); no code span (backticks escaped); no mention, issue reference
// or bare link (a word joiner after @, # and a URL's scheme); no control
// character, ANSI escape, or bidirectional or zero-width character (each is
// its code point, "<U+202E>": package visible). A backslash is escaped too,
// so that none of these escapes can be undone by one s brings. & is an
// entity rather than "\&" because Text is also what a <summary> holds,
// where HTML reads an entity and no backslash escape.
func Text(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			b.WriteByte(' ')
		case '\n':
			b.WriteByte(' ')
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '[', ']', '|':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '@', '#':
			b.WriteByte(c)
			b.WriteString(wj)
		case ':':
			b.WriteByte(c)
			if strings.HasPrefix(s[i+1:], "//") {
				b.WriteString(wj)
			}
		case 'w', 'W':
			if len(s) >= i+4 && strings.EqualFold(s[i:i+4], "www.") {
				b.WriteString(s[i : i+3])
				b.WriteString(wj)
				i += 2
				continue
			}
			b.WriteByte(c)
		default:
			if c < 0x20 && c != '\t' || c >= 0x7f {
				r, size := utf8.DecodeRuneInString(s[i:])
				i += size - 1
				if visible.Hidden(r) {
					b.WriteString(html.EscapeString(visible.Name(r)))
					continue
				}
				b.WriteRune(r) // U+FFFD for a byte that is not UTF-8
				continue
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// inline keeps text on one line and inside its table cell: a lone CR is a
// line break to CommonMark as much as LF is, and GFM splits a row at a
// pipe before it reads code spans.
var inline = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "|", `\|`)

// Code is s as a code span, safe in a table cell: on one line, its
// hidden characters named (package visible), and its fence longer than
// any run of backticks in s. Nothing else is escaped: a code span reads no
// Markdown, no character reference and no HTML.
func Code(s string) string {
	s = visible.String(inline.Replace(s))
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// oneLine puts text on one line: a line break inside an HTML element
// would end the block it is in at the next blank line the text brings.
var oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// HTML is s, text patchproof does not control, for inside an HTML element
// (a <summary>, the <code> in it), where Markdown is not read: escaped as
// HTML (& included, so no character reference of s's is read), on one
// line, its hidden characters named (package visible), and with no "@name"
// or "#123" that GitHub would make a mention or a reference in the
// element's text. The word joiners go in before the HTML escapes, whose
// "&#39;" a joiner after its # would break.
func HTML(s string) string {
	s = mentions.Replace(visible.String(oneLine.Replace(s)))
	return html.EscapeString(s)
}

var mentions = strings.NewReplacer("@", "@"+wj, "#", "#"+wj)

// Fence is the fence of a code block holding s: three backticks, or more
// than the longest run of backticks in s (a string literal in a
// disassembly, a test's expected output).
func Fence(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence
}

// blockLines makes CRLF a code block's line break, LF's, and shows a lone
// CR, which CommonMark would read as a line break and a terminal or log as
// a return to the line's start.
var blockLines = strings.NewReplacer("\r\n", "\n", "\r", visible.Name('\r'))

// CodeBlock is s as a fenced code block in language lang ("" for none),
// without the blank lines s may end with, and ending in a newline. A code
// block reads no Markdown, so s is not escaped; but its lone CRs and hidden
// characters are named (package visible), which no fence would stop.
func CodeBlock(lang, s string) string {
	s = strings.TrimRight(visible.String(blockLines.Replace(s)), "\n")
	fence := Fence(s)
	return fence + lang + "\n" + s + "\n" + fence + "\n"
}

// Anchor is the id GitHub gives a heading: lower case, spaces to hyphens,
// punctuation other than - and _ dropped.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}
