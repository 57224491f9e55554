package visible

import "testing"

func TestString(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"plain", "ext/mysqlnd/mysqlnd.c → 8 bytes", "ext/mysqlnd/mysqlnd.c → 8 bytes"},
		{"tab and line breaks are the caller's", "a\tb\r\nc\rd", "a\tb\r\nc\rd"},
		{"ANSI colour", "\x1b[31mred\x1b[0m", "<U+001B>[31mred<U+001B>[0m"},
		{"NUL, BEL, DEL", "a\x00b\x07c\x7f", "a<U+0000>b<U+0007>c<U+007F>"},
		{"C1 CSI and NEL", "a\u009b31mb\u0085c", "a<U+009B>31mb<U+0085>c"},
		{"right-to-left override", "\u202Eexe.txt", "<U+202E>exe.txt"},
		{"isolates and marks", "\u2066a\u2069\u200e\u200f\u061c", "<U+2066>a<U+2069><U+200E><U+200F><U+061C>"},
		{"zero-width", "ad\u200bmin\u200d\u2060\ufeff", "ad<U+200B>min<U+200D><U+2060><U+FEFF>"},
		{"line separator", "a\u2028b\u2029c", "a<U+2028>b<U+2029>c"},
		{"soft hyphen and tag", "a\u00adb\U000E0041", "a<U+00AD>b<U+E0041>"},
		{"not UTF-8", "a\x9b31mb\xff", "a\ufffd31mb\ufffd"},
		{"replacement character kept", "a\ufffdb", "a\ufffdb"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
