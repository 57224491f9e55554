package markdown

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"

	"github.com/patchproof/patchproof/internal/visible"
)

// Payloads are text a PR controls (a commit subject, a test's file name, a
// skip reason, a function name) that tried to deface the comment.
var Payloads = []string{
	"@php/release-managers ![px](https://evil.example/p.png)",
	"ping @someone and @org/team",
	"[click](https://evil.example/x) and <https://evil.example/y>",
	"see https://evil.example/z or www.evil.example",
	"mail admin@evil.example",
	"fixes php/php-src#12345 and #678",
	"gh`8978`.phpt and ``` fence",
	"a | b \\| c",
	`<img src="https://evil.example/i.png"> <script>alert(1)</script>`,
	"line one\nline two\r\n> quote",
	`trailing backslash \`,
}

// TestTextUntrusted renders each payload with a GFM parser (tables and
// autolinks on, as GitHub's), inside a table cell and in a list item, and
// checks that nothing but plain text comes out: no link, image, autolink,
// HTML or code span, no extra table cell, and no "@name" or "#123" that
// GitHub would turn into a mention or a reference.
func TestTextUntrusted(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	mention := regexp.MustCompile(`(^|[^\w])[@#][\w/]`)
	for _, p := range Payloads {
		for _, doc := range []string{
			"| a | b |\n|---|---|\n| " + Text(p) + " | x |\n",
			"- " + Text(p) + "\n",
		} {
			src := []byte(doc)
			root := md.Parser().Parse(gmtext.NewReader(src))
			var plain bytes.Buffer
			cells := 0
			ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
				if !entering {
					return ast.WalkContinue, nil
				}
				switch n := n.(type) {
				case *ast.Link, *ast.Image, *ast.AutoLink, *ast.RawHTML, *ast.HTMLBlock, *ast.CodeSpan, *ast.Blockquote:
					t.Errorf("payload %q rendered a %s node in %q", p, n.Kind(), doc)
				case *east.TableCell:
					cells++
				case *ast.Text:
					plain.Write(n.Segment.Value(src))
				case *ast.String:
					plain.Write(n.Value)
				}
				return ast.WalkContinue, nil
			})
			if strings.HasPrefix(doc, "|") && cells != 4 {
				t.Errorf("payload %q made %d table cells, want 4", p, cells)
			}
			if m := mention.FindString(plain.String()); m != "" {
				t.Errorf("payload %q leaves %q in the text, a mention or reference on GitHub", p, m)
			}
		}
	}
}

// TestTextKeepsPlainText: what a reader sees is the text itself.
func TestTextKeepsPlainText(t *testing.T) {
	for _, s := range []string{"mysqli_connect.phpt", "PHP-8.4", "ext/mysqlnd/mysqlnd_statistics.c", "2 of 3 passed (rerun)"} {
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it unchanged", s, got)
		}
	}
}

// TestCodeUntrusted: a payload as a code span stays one code span in its
// cell, however many backticks and pipes it holds.
func TestCodeUntrusted(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for _, p := range Payloads {
		doc := "| a | b |\n|---|---|\n| " + Code(p) + " | x |\n"
		src := []byte(doc)
		spans, cells, other := 0, 0, 0
		ast.Walk(md.Parser().Parse(gmtext.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				return ast.WalkContinue, nil
			}
			switch n.(type) {
			case *ast.CodeSpan:
				spans++
				return ast.WalkSkipChildren, nil
			case *east.TableCell:
				cells++
			case *ast.Link, *ast.Image, *ast.AutoLink, *ast.RawHTML:
				other++
			}
			return ast.WalkContinue, nil
		})
		if spans != 1 || cells != 4 || other != 0 {
			t.Errorf("Code(%q) in a cell: %d code spans, %d cells, %d links/HTML; want 1, 4, 0 (%q)", p, spans, cells, other, doc)
		}
	}
}

// TestHTMLUntrusted: a payload inside an HTML element stays its text: no
// tag of its own, one line (a line break would let the text out of the
// element's block), and no live mention or reference.
func TestHTMLUntrusted(t *testing.T) {
	mention := regexp.MustCompile(`(^|[^\w])[@#][\w/]`)
	for _, p := range Payloads {
		got := HTML(p)
		if strings.ContainsAny(got, "<>\"\r\n") {
			t.Errorf("HTML(%q) = %q: a tag, a quote or a line break is left", p, got)
		}
		// What GitHub links is the element's text: its references read.
		if m := mention.FindString(html.UnescapeString(got)); m != "" {
			t.Errorf("HTML(%q) = %q leaves %q", p, got, m)
		}
	}
	if got := HTML("mysqli_connect.phpt"); got != "mysqli_connect.phpt" {
		t.Errorf("HTML changed plain text: %q", got)
	}
}

// Probes are what got through the escapers before they knew of them: a
// character reference that GitHub reads as @, # or : after Text's
// escapes; a lone CR, a line break to CommonMark (goldmark does not take
// it for one, so these are checked on the escaped text itself); and the
// bidirectional, zero-width and control characters of an ANSI escape, a
// C1 CSI or a reordered file name.
var Probes = []string{
	"&commat;php/security-team", "&#64;x", "&#x40;x", "&num;1", "https&colon;//evil.example",
	"a\rb", "a\r\nb", "\u202Eexe.txt", "\u2066x\u2069 \u200e\u200f\u061c", "ad\u200bmin", "\x1b[31mred", "a\u009b31mb", "a\x9b31mb", "\x00\x07\x7f",
}

// references are the character references that can form in s (named,
// decimal or hex, terminated or not) other than the &lt;, &gt; and &amp;
// that Text and HTML write.
func references(s string) []string {
	var refs []string
	for _, m := range regexp.MustCompile(`&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?`).FindAllString(s, -1) {
		if m != "&lt;" && m != "&gt;" && m != "&amp;" {
			refs = append(refs, m)
		}
	}
	return refs
}

// hiddenIn are s's hidden characters (package visible) and line breaks,
// but for the word joiners Text and HTML put after @ and #; a byte that
// is not UTF-8 is utf8.RuneError.
func hiddenIn(s string, lines bool) []rune {
	var rs []rune
	if !utf8.ValidString(s) {
		rs = append(rs, utf8.RuneError)
	}
	for _, r := range s {
		if (visible.Hidden(r) && r != '\u2060') || r == '\r' || (!lines && r == '\n') {
			rs = append(rs, r)
		}
	}
	return rs
}

// TestProbes: each probe, through each escaper, comes out with no
// character reference of its own, no raw CR (nor LF on one line), and no
// control, bidirectional or zero-width character; and Text's, rendered
// as GitHub renders a table cell, makes no @, # or link of a reference.
func TestProbes(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for _, p := range Probes {
		for name, got := range map[string]string{"Text": Text(p), "Code": Code(p), "HTML": HTML(p), "CodeBlock": CodeBlock("", p)} {
			if refs := references(got); len(refs) > 0 && name != "Code" && name != "CodeBlock" {
				t.Errorf("%s(%q) = %q: references %q", name, p, got, refs)
			}
			if rs := hiddenIn(got, name == "CodeBlock"); len(rs) > 0 {
				t.Errorf("%s(%q) = %q: holds %q", name, p, got, rs)
			}
		}
		var out bytes.Buffer
		if err := md.Convert([]byte("| a | b |\n|---|---|\n| "+Text(p)+" | x |\n"), &out); err != nil {
			t.Fatal(err)
		}
		seen := html.UnescapeString(out.String())
		for _, live := range []string{"@php/security-team", "@x", "#1", "https://evil", "<a "} {
			if strings.Contains(seen, live) {
				t.Errorf("Text(%q) renders as %q: %q is read", p, out.String(), live)
			}
		}
	}
}

// TestHiddenShown: what the escapers make of a hidden character is its
// code point, for the reader to see.
func TestHiddenShown(t *testing.T) {
	for _, tt := range []struct{ name, got, want string }{
		{"Text", Text("\u202Eexe.txt \x1b[31m"), "&lt;U+202E&gt;exe.txt &lt;U+001B&gt;\\[31m"},
		{"Text, a reference", Text("&commat;php &#64;x"), "&amp;commat;php &amp;#\u206064;x"},
		{"Code", Code("a\rb\u202E"), "`a b<U+202E>`"},
		{"HTML", HTML("it's \"\u2066\""), "it&#39;s &#34;&lt;U+2066&gt;&#34;"},
		{"CodeBlock", CodeBlock("", "a\r\nb\rc\x1b[0m"), "```\na\nb<U+000D>c<U+001B>[0m\n```\n"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
