package builders

import "testing"

// What a user names (--variants, --profile, --builder) is read once, by
// the type's parser; anything else is refused, naming the value. TSan is
// the concurrency check's to ask for, not a user's.
func TestParse(t *testing.T) {
	parsers := map[string]func(string) (string, error){
		"variant": func(s string) (string, error) { v, err := ParseVariant(s); return string(v), err },
		"profile": func(s string) (string, error) { p, err := ParseProfile(s); return string(p), err },
		"builder": func(s string) (string, error) { k, err := ParseExecutorKind(s); return string(k), err },
	}
	for _, tt := range []struct {
		parser, in string
		ok         bool
	}{
		{"variant", "nts", true},
		{"variant", "zts", true},
		{"variant", "debug-zts", true},
		{"variant", "tsan", false},
		{"variant", "NTS", false},
		{"variant", "", false},
		{"profile", "mysql", true},
		{"profile", "official", true},
		{"profile", "minimal", false},
		{"builder", "host", true},
		{"builder", "docker", true},
		{"builder", "podman", false},
		{"builder", "", false},
	} {
		t.Run(tt.parser+"/"+tt.in, func(t *testing.T) {
			got, err := parsers[tt.parser](tt.in)
			switch {
			case tt.ok && (err != nil || got != tt.in):
				t.Errorf("= %q, %v; want %q", got, err, tt.in)
			case !tt.ok && err == nil:
				t.Errorf("= %q, accepted", got)
			}
		})
	}
}

// results.json's "executor" of a build is its executor's kind.
func TestExecutorNames(t *testing.T) {
	if got := (&Host{}).String(); got != string(KindHost) {
		t.Errorf("Host = %q", got)
	}
	if got := (&Docker{}).String(); got != string(KindDocker) {
		t.Errorf("Docker = %q", got)
	}
}
