package checkout

import (
	"errors"
	"testing"
)

func TestCheckRefName(t *testing.T) {
	for _, ref := range []string{"master", "PHP-8.4", "origin/PHP-8.4", "pull/123/head", "refs/pull/123/head",
		"refs/heads/feature/x", "v8.4.1", "2c3d4e5f60718293a4b5c6d7e8f9012345678901", "HEAD", "a-b_c+d"} {
		if err := CheckRefName(ref); err != nil {
			t.Errorf("CheckRefName(%q) = %v, want nil", ref, err)
		}
	}
	for _, ref := range []string{"", "@", "*", "PHP-8.*", "PHP-8.?", "[ab]", "refs/heads/*", "a..b", "a~1", "a^", "a^{}",
		"a:b", "a b", "a\tb", "a\x7f", `a\b`, "-x", "a/", "a.", "a.lock", "a.lock/b", "a//b", "/a", ".a", "a/.b", "a@{1}"} {
		if err := CheckRefName(ref); !errors.Is(err, ErrNotARefName) {
			t.Errorf("CheckRefName(%q) = %v, want ErrNotARefName", ref, err)
		}
	}
}
