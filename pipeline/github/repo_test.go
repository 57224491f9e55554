package github

import "testing"

func TestParseRepo(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Repo
		web  string
		ok   bool
	}{
		{"https://github.com/php/php-src", PHPSrc, "https://github.com/php/php-src", true},
		{"https://github.com/php/php-src.git/", PHPSrc, "https://github.com/php/php-src", true},
		{"git@github.com:php/php-src.git", PHPSrc, "https://github.com/php/php-src", true},
		{"ssh://git@ghe.example.com/php/php-src", Repo{"ghe.example.com", "php", "php-src"}, "https://ghe.example.com/php/php-src", true},
		{"/home/me/php-src", Repo{}, "", false},
		{"file:///srv/php-src.git", Repo{}, "", false},
		{"demo (PHP 8.2.32 + mysqlnd atomic statistics)", Repo{}, "", false},
		{"https://github.com/php", Repo{}, "", false},
	} {
		got, ok := ParseRepo(tt.in)
		if got != tt.want || ok != tt.ok || got.Web() != tt.web {
			t.Errorf("ParseRepo(%q) = %+v %v (web %q), want %+v %v (web %q)", tt.in, got, ok, got.Web(), tt.want, tt.ok, tt.web)
		}
	}
}

func TestParsePullRequest(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string // its String, "" for an error
		web  string
	}{
		{"php/php-src#4242", "php/php-src#4242", ""},
		{"https://github.com/php/php-src/pull/24448", "php/php-src#24448", "https://github.com/php/php-src/pull/24448"},
		{"php-src#1", "", ""},
		{"php/php-src", "", ""},
		{"php/php-src#x", "", ""},
		{"https://github.com/php/php-src/issues/3", "", ""},
	} {
		got, err := ParsePullRequest(tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParsePullRequest(%q) = %v, want an error", tt.in, got)
		case tt.want != "" && (err != nil || got.String() != tt.want || got.Web() != tt.web):
			t.Errorf("ParsePullRequest(%q) = %v (web %q), %v; want %s (web %q)", tt.in, got, got.Web(), err, tt.want, tt.web)
		}
	}
	if got := (PullRequest{Repo: PHPSrc, Number: 7}).HeadRef(); got != "pull/7/head" {
		t.Errorf("HeadRef = %q", got)
	}
}
