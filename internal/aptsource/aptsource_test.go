package aptsource

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMirror(t *testing.T) {
	for _, tt := range []struct {
		name  string
		list  string
		files map[string]string
		want  string
		err   error
	}{
		{
			name: "deb822, security listed first",
			files: map[string]string{
				"a-security.sources": "Types: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\nComponents: main\n",
				"debian.sources": "Types: deb\n# http://snapshot.example/archive/debian/20250520T000000Z\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\nComponents: main\n\n" +
					"Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n",
			},
			want: "http://mirror.example/debian",
		},
		{
			name: "one-line sources.list with options, deb-src ignored",
			list: "# a comment\ndeb-src http://src.example/debian bookworm main\ndeb [arch=amd64 signed-by=/k.gpg] http://list.example/debian bookworm main\n",
			want: "http://list.example/debian",
		},
		{
			name:  "a disabled stanza is passed over",
			files: map[string]string{"x.sources": "Enabled: no\nTypes: deb\nURIs: http://off.example/debian\nSuites: bookworm\n\nTypes: deb\nURIs: http://on.example/debian\nSuites: bookworm\n"},
			want:  "http://on.example/debian",
		},
		{
			name:  "only security",
			files: map[string]string{"s.sources": "Types: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\n"},
			err:   ErrNoMirror,
		},
		{name: "nothing at all", err: ErrNoMirror},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := Files{List: filepath.Join(dir, "sources.list"), Dir: filepath.Join(dir, "sources.list.d")}
			os.MkdirAll(f.Dir, 0o755)
			if tt.list != "" {
				os.WriteFile(f.List, []byte(tt.list), 0o644)
			}
			for name, content := range tt.files {
				os.WriteFile(filepath.Join(f.Dir, name), []byte(content), 0o644)
			}
			got, err := f.Mirror()
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Mirror = %q, %v, want %v", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Mirror = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestImageSources(t *testing.T) {
	for _, tt := range []struct {
		name  string
		list  string
		files map[string]string
		want  string
	}{
		{
			name: "deb822 with updates and security, and a third party's repository",
			files: map[string]string{
				"debian.sources": "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\nComponents: main\n\n" +
					"Types: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\nComponents: main\n",
				"other.list": "deb [signed-by=/k.gpg] http://vendor.example/linux/debian bookworm stable\n",
			},
			want: "deb http://mirror.example/debian bookworm main\ndeb http://mirror.example/debian bookworm-updates main\ndeb http://security.example/debian-security bookworm-security main\n",
		},
		{
			name: "the release alone",
			list: "deb http://list.example/debian bookworm main contrib\n",
			want: "deb http://list.example/debian bookworm main\n",
		},
		{
			name: "another release's suites are not the image's",
			list: "deb http://list.example/debian trixie main\ndeb http://list.example/debian trixie-updates main\n",
			want: "deb http://list.example/debian bookworm main\n",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := Files{List: filepath.Join(dir, "sources.list"), Dir: filepath.Join(dir, "sources.list.d")}
			os.MkdirAll(f.Dir, 0o755)
			if tt.list != "" {
				os.WriteFile(f.List, []byte(tt.list), 0o644)
			}
			for name, content := range tt.files {
				os.WriteFile(filepath.Join(f.Dir, name), []byte(content), 0o644)
			}
			got, err := f.ImageSources("bookworm")
			if err != nil || got != tt.want {
				t.Errorf("ImageSources = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
	if _, err := (Files{List: filepath.Join(t.TempDir(), "none")}).ImageSources("bookworm"); !errors.Is(err, ErrNoMirror) {
		t.Errorf("no sources: %v, want ErrNoMirror", err)
	}
}
