package pipeline

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/checkout"
)

// The build heartbeat counts compiler lines of the log, split across
// writes as make's output is, against the Makefile's objects once
// configure has given them.
func TestCompileCounter(t *testing.T) {
	var log bytes.Buffer
	c := &compileCounter{w: &log}
	write := func(s string) {
		t.Helper()
		if n, err := c.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	check := func(want string) {
		t.Helper()
		if got := c.status(); got != want {
			t.Errorf("status = %q, want %q", got, want)
		}
	}

	write("checking if ccache gcc supports -c -o file.o... yes\n")
	check("1 files compiled")
	c.setTotal(3)
	check("0 of 3 files compiled (0%)")
	write("libtool --mode=compile gcc -Imain/ -c main/main.c -o main/mai")
	check("0 of 3 files compiled (0%)")
	write("n.lo\nlibtool --mode=link gcc -o sapi/cli/php\n")
	check("1 of 3 files compiled (33%)")
	write("gcc -c a.c -o a.lo\ngcc -c b.c -o b.lo\n")
	check("3 of 3 files compiled (100%)")
	if want := "checking if ccache gcc supports -c -o file.o... yes\n" +
		"libtool --mode=compile gcc -Imain/ -c main/main.c -o main/main.lo\nlibtool --mode=link gcc -o sapi/cli/php\n" +
		"gcc -c a.c -o a.lo\ngcc -c b.c -o b.lo\n"; log.String() != want {
		t.Errorf("log = %q, want every byte passed through", log.String())
	}
}

// A change to the build system in a tree that ships configure is built
// with its own configure: both sides get ./buildconf --force (configured
// alike by their own checks), and the head is built fresh, not derived
// from its base's configured tree; a change to a C file alone derives the
// head from its base and runs no buildconf.
func TestBuildJobsBuildSystemChange(t *testing.T) {
	dir := t.TempDir()
	g, err := git.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{
		"configure":                      "#!/bin/sh\n",
		"main/php_version.h":             "#define PHP_VERSION \"8.2.32\"\n",
		"ext/mysqlnd/config9.m4":         "PHP_NEW_EXTENSION(mysqlnd, mysqlnd.c)\n",
		"ext/mysqlnd/mysqlnd.c":          "int mysqlnd;\n",
		"ext/mysqlnd/mysqlnd_priv.h":     "/* */\n",
		"ext/mysqli/tests/CONFLICTS":     "mysql\n",
		"ext/standard/basic_functions.c": "int bf;\n",
	}
	baseCommit := commitTree(t, g, plumbing.ZeroHash, base)
	with := func(path, text string) plumbing.Hash {
		files := maps.Clone(base)
		files[path] = text
		return commitTree(t, g, baseCommit, files)
	}
	repo, err := checkout.Open(context.Background(), dir, checkout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		head      plumbing.Hash
		buildconf bool
	}{
		{"config9.m4 changed", with("ext/mysqlnd/config9.m4", "PHP_NEW_EXTENSION(mysqlnd, mysqlnd.c mysqlnd_new.c)\n"), true},
		{"a C file changed", with("ext/mysqlnd/mysqlnd.c", "int mysqlnd = 1;\n"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stages, err := ParseStageSet([]string{"checkout", "build", "codediff"})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := newTestRun(t, Config{Variants: []builders.Variant{builders.NTS, builders.ZTS}, Stages: stages})
			r.Targets = []*Target{{Name: "PHP-8.2", Repo: repo, Base: baseCommit, Head: tt.head, BaseTree: t.TempDir(), HeadTree: t.TempDir()}}
			jobs, err := buildStage{}.jobs(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 4 {
				t.Fatalf("%d jobs, want base and head of nts and zts", len(jobs))
			}
			for _, j := range jobs {
				if j.spec.Buildconf != tt.buildconf {
					t.Errorf("%s: Buildconf = %v, want %v", j.spec.Label, j.spec.Buildconf, tt.buildconf)
				}
				derived := j.from >= 0
				if want := j.side == side.Head && !tt.buildconf; derived != want {
					t.Errorf("%s: derived from job %d; want derived: %v", j.spec.Label, j.from, want)
				}
				if j.spec.Trusted != (j.side == side.Base) {
					t.Errorf("%s: Trusted = %v", j.spec.Label, j.spec.Trusted)
				}
			}
		})
	}
}

// commitTree commits files (path: text) with parent (none when zero) into
// g and returns the commit.
func commitTree(t *testing.T, g *git.Repository, parent plumbing.Hash, files map[string]string) plumbing.Hash {
	t.Helper()
	s := g.Storer
	flat := checkout.Files{}
	for path, text := range files {
		h, err := checkout.WriteBlob(s, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		flat[path] = checkout.Entry{Mode: filemode.Regular, Hash: h}
	}
	root, err := checkout.WriteTree(s, flat)
	if err != nil {
		t.Fatal(err)
	}
	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = append(parents, parent)
	}
	c, err := checkout.WriteCommit(s, root, parents, "test", object.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The ThreadSanitizer builds are made for the stage that runs them, the
// race check, from the ZTS builds: not without it or without ZTS, and
// never asked of --variants. The ABI check reads their debug info where
// they are made, and probes the ZTS builds' headers where not.
func TestExtraVariants(t *testing.T) {
	stages := func(names ...string) StageSet {
		set, err := ParseStageSet(names)
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	for _, tt := range []struct {
		name string
		cfg  Config
		want []builders.Variant
	}{
		{"every stage", Config{}, []builders.Variant{builders.TSan}},
		{"race", Config{Stages: stages("build", "race")}, []builders.Variant{builders.TSan}},
		{"abi", Config{Stages: stages("build", "abi")}, nil},
		{"neither", Config{Stages: stages("build", "codediff", "tests", "bench")}, nil},
		{"no ZTS", Config{Variants: []builders.Variant{builders.NTS}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.setDefaults()
			if got := extraVariants(&tt.cfg); !slices.Equal(got, tt.want) {
				t.Errorf("extraVariants = %v, want %v", got, tt.want)
			}
		})
	}
}
