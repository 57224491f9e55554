package markdown

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"
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
		if m := mention.FindString(got); m != "" {
			t.Errorf("HTML(%q) = %q leaves %q", p, got, m)
		}
	}
	if got := HTML("mysqli_connect.phpt"); got != "mysqli_connect.phpt" {
		t.Errorf("HTML changed plain text: %q", got)
	}
}
