package markdown

import "testing"

func TestEscaping(t *testing.T) {
	for _, tt := range []struct {
		name, got, want string
	}{
		{"text", Text("a | b <b>x</b>\r\nc > d"), `a \| b &lt;b&gt;x&lt;/b&gt; c &gt; d`},
		{"code", Code("a|b"), "`a\\|b`"},
		{"code with backticks", Code("x `y` z"), "``x `y` z``"},
		{"code starting with a backtick", Code("`y"), "`` `y ``"},
		{"fence", Fence("no backticks"), "```"},
		{"longer fence", Fence("a ```` b"), "`````"},
		{"block", CodeBlock("diff", "-a\n+b\n\n"), "```diff\n-a\n+b\n```\n"},
		{"block holding a fence", CodeBlock("", "```"), "````\n```\n````\n"},
		{"anchor", Anchor("PHP-8.4 (backport)"), "php-84-backport"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
