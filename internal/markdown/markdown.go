// Package markdown owns how patchproof puts text into GitHub-flavoured
// Markdown: inline text that cannot break a table row or open an HTML tag,
// code spans and fenced code blocks that hold any backticks, and the anchors
// GitHub gives headings. Every report section escapes through it, so that a
// test name, a compiler message or a branch name renders as itself.
package markdown

import "strings"

// inline keeps text on one line and inside its table cell.
var inline = strings.NewReplacer("\r\n", " ", "\n", " ", "|", `\|`)

// text also keeps it from being read as HTML: with < and > escaped no tag
// opens, and a > at the start of a line cannot begin a quote.
var text = strings.NewReplacer("\r\n", " ", "\n", " ", "|", `\|`, "<", "&lt;", ">", "&gt;")

// Text makes s safe as inline Markdown on one line and in a table cell: no
// line breaks, no column separators, no HTML.
func Text(s string) string { return text.Replace(s) }

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
