// Package markdown owns how patchproof puts text into GitHub-flavoured
// Markdown: inline text that cannot break a table row or open an HTML tag,
// code spans and fenced code blocks that hold any backticks, and the anchors
// GitHub gives headings. Every report section escapes through it, so that a
// test name, a compiler message or a branch name renders as itself.
package markdown

import (
	"html"
	"strings"
)

// inline keeps text on one line and inside its table cell.
var inline = strings.NewReplacer("\r\n", " ", "\n", " ", "|", `\|`)

// wj is U+2060 WORD JOINER: invisible, and enough to keep GitHub from
// reading "@name" as a mention, "#123" as a reference, or a bare
// "https://" or "www." as a link.
const wj = "\u2060"

// Text makes s, text that patchproof does not control (a commit subject,
// a test's name or skip reason, a branch, a compiler message, a function
// name), safe as inline Markdown on one line and in a table cell. It is the
// one function for such text: no line breaks and no column separators; no
// HTML (< and > are entities, so no tag, autolink or quote opens); no link
// or image ([ and ] escaped); no code span (backticks escaped); no
// mention, issue reference or bare link (a word joiner after @, # and a
// URL's scheme). A backslash is escaped too, so that none of these escapes
// can be undone by one s brings.
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
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Code is s as a code span, safe in a table cell: its fence is longer than
// any run of backticks in s.
func Code(s string) string {
	s = inline.Replace(s)
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
// HTML, on one line, and with no "@name" or "#123" that GitHub would make a
// mention or a reference in the element's text.
func HTML(s string) string {
	s = html.EscapeString(oneLine.Replace(s))
	return strings.NewReplacer("@", "@"+wj, "#", "#"+wj).Replace(s)
}

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

// CodeBlock is s as a fenced code block in language lang ("" for none),
// without the blank lines s may end with, and ending in a newline.
func CodeBlock(lang, s string) string {
	s = strings.TrimRight(s, "\n")
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
