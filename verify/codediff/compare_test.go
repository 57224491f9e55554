package codediff

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// phpCFLAGS are the flags of the official PHP Docker images.
var phpCFLAGS = []string{"-fstack-protector-strong", "-fpic", "-fpie", "-O2", "-D_LARGEFILE_SOURCE", "-D_FILE_OFFSET_BITS=64"}

// fixture has what the comparison must see through: statics in .bss and
// .rodata, literals, a double constant, a jump table, calls the assembler
// resolves itself (to the static bump), and cold pieces (dispatch.cold,
// total.cold, complain.constprop.0).
const fixture = `#include <stdio.h>
#include <stdlib.h>

static int counter;
static const int weights[8] = {3, 1, 4, 1, 5, 9, 2, 6};

__attribute__((noinline)) static int bump(int x) { counter += x; return counter * 3; }
__attribute__((noinline)) int twice(int x) { return bump(x) + bump(x + 1); }
__attribute__((noinline)) int greet(const char *who) { return printf("hello, %s\n", who); }
__attribute__((noinline)) int weigh(int i) { return weights[i & 7] + bump(i); }
__attribute__((noinline)) double scale(double x) { return x * 2.5; }

int dispatch(int op, int x) {
	switch (op) {
	case 0: return bump(x);
	case 1: return twice(x);
	case 2: return greet("two");
	case 3: return x * 7;
	case 4: return weigh(x);
	case 5: return puts("five");
	case 6: return (int)scale(x);
	default: return -1;
	}
}

__attribute__((cold, noinline)) static void complain(const char *what, int i) { fprintf(stderr, "%s at %d\n", what, i); }

int total(const int *p, int n) {
	int s = 0;
	for (int i = 0; i < n; i++) {
		if (__builtin_expect(p[i] < 0, 0)) {
			complain("negative", i);
			abort();
		}
		s += p[i] * 3;
	}
	return s;
}

int spare(int x) { return x - 1; }
`

// addedFirst goes before everything else, so that every section's contents
// move: .bss, .rodata (a table and a jump table), the strings, the
// constants and .text.
const addedFirst = `
static long added_state[4];
static const short added_table[6] = {7, 7, 7, 1, 2, 3};
__attribute__((noinline)) int added_first(int op, int i) {
	switch (op) {
	case 0: return puts("added literal");
	case 1: return added_state[i & 3]++;
	case 2: return added_table[i % 6];
	case 3: return (int)(i * 9.75);
	case 4: return printf("%d\n", i);
	case 5: return i << 3;
	default: return 0;
	}
}
`

// replace replaces old, which must occur in src, with new.
func replace(t *testing.T, src, old, new string) string {
	t.Helper()
	if !strings.Contains(src, old) {
		t.Fatalf("fixture does not contain %q", old)
	}
	return strings.Replace(src, old, new, 1)
}

// buildTree compiles each source into dir/ext/mysqlnd/NAME.o with gcc and
// leaves a libtool-style NAME.lo text file next to it, as PHP's build does.
func buildTree(t *testing.T, dir string, sources map[string]string, flags ...string) {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	obj := filepath.Join(dir, "ext", "mysqlnd")
	if err := os.MkdirAll(obj, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range sources {
		c := filepath.Join(obj, name+".c")
		if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append(slices.Clone(phpCFLAGS), flags...)
		args = append(args, "-c", c, "-o", filepath.Join(obj, name+".o"))
		if out, err := exec.CommandContext(t.Context(), gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", name, err, out)
		}
		lo := "# " + name + ".lo - a libtool object file\npic_object='.libs/" + name + ".o'\n"
		if err := os.WriteFile(filepath.Join(obj, name+".lo"), []byte(lo), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// outcome is what a comparison decided, by "object:function".
type outcome struct {
	Changed, Added, Removed []string
}

func outcomeOf(r *Report) outcome {
	o := outcome{Changed: []string{}, Added: []string{}, Removed: []string{}}
	for _, d := range r.Changed {
		o.Changed = append(o.Changed, d.Object+":"+d.Name)
	}
	for _, f := range r.Added {
		o.Added = append(o.Added, f.Object+":"+f.Name)
	}
	for _, f := range r.Removed {
		o.Removed = append(o.Removed, f.Object+":"+f.Name)
	}
	return o
}

func TestCompareDirs(t *testing.T) {
	const m = "ext/mysqlnd/m.o:"
	tests := []struct {
		name string
		head func(t *testing.T) map[string]string
		want outcome
	}{{
		name: "same source in another directory",
		head: func(t *testing.T) map[string]string { return map[string]string{"m": fixture} },
	}, {
		name: "a change inside one function",
		head: func(t *testing.T) map[string]string {
			return map[string]string{"m": replace(t, fixture, "counter * 3", "counter * 5")}
		},
		want: outcome{Changed: []string{m + "bump"}},
	}, {
		name: "a string literal added in one function",
		head: func(t *testing.T) map[string]string {
			return map[string]string{"m": replace(t, fixture,
				`return printf("hello, %s\n", who);`,
				`printf("hello, %s\n", who); return puts("and welcome");`)}
		},
		want: outcome{Changed: []string{m + "greet"}},
	}, {
		name: "a changed literal marks the function using it",
		head: func(t *testing.T) map[string]string {
			return map[string]string{"m": replace(t, fixture, `puts("five")`, `puts("FIVE")`)}
		},
		want: outcome{Changed: []string{m + "dispatch"}},
	}, {
		name: "a changed double constant",
		head: func(t *testing.T) map[string]string {
			return map[string]string{"m": replace(t, fixture, "x * 2.5", "x * 3.5")}
		},
		want: outcome{Changed: []string{m + "scale"}},
	}, {
		name: "statics, literals, constants and a jump table added before everything",
		head: func(t *testing.T) map[string]string {
			return map[string]string{"m": replace(t, fixture, "#include <stdlib.h>\n", "#include <stdlib.h>\n"+addedFirst)}
		},
		// gcc 12 moves the default case to a cold piece.
		want: outcome{Added: []string{m + "added_first", m + "added_first.cold"}},
	}, {
		name: "a new static function between caller and callee",
		head: func(t *testing.T) map[string]string {
			return map[string]string{"m": replace(t, fixture,
				"__attribute__((noinline)) int twice",
				"__attribute__((used, noinline)) static int spacer(int x) { return x * x + 42; }\n"+
					"__attribute__((noinline)) int twice")}
		},
		want: outcome{Added: []string{m + "spacer"}},
	}, {
		name: "a call to a different function",
		head: func(t *testing.T) map[string]string {
			return map[string]string{"m": replace(t, fixture, "weights[i & 7] + bump(i)", "weights[i & 7] + twice(i)")}
		},
		want: outcome{Changed: []string{m + "weigh"}},
	}, {
		name: "a change in a cold piece",
		head: func(t *testing.T) map[string]string {
			return map[string]string{"m": replace(t, fixture, "abort();", "exit(3);")}
		},
		want: outcome{Changed: []string{m + "total.cold"}},
	}, {
		name: "a function removed",
		head: func(t *testing.T) map[string]string {
			return map[string]string{"m": replace(t, fixture, "int spare(int x) { return x - 1; }\n", "")}
		},
		want: outcome{Removed: []string{m + "spare"}},
	}, {
		name: "an object only in head",
		head: func(t *testing.T) map[string]string {
			return map[string]string{"m": fixture, "extra": "int extra_one(int x) { return x + 1; }\nstatic int extra_two(int x) { return x; }\nint (*extra_ptr)(int) = extra_two;\n"}
		},
		want: outcome{Added: []string{"ext/mysqlnd/extra.o:extra_one", "ext/mysqlnd/extra.o:extra_two"}},
	}}
	for _, flags := range [][]string{nil, {"-ffunction-sections"}} {
		for _, tt := range tests {
			t.Run(strings.Join(append([]string{tt.name}, flags...), " "), func(t *testing.T) {
				base, head := t.TempDir(), t.TempDir()
				buildTree(t, base, map[string]string{"m": fixture}, flags...)
				buildTree(t, head, tt.head(t), flags...)
				rep, err := CompareDirs(base, head, Options{})
				if err != nil {
					t.Fatal(err)
				}
				want := tt.want
				for _, l := range []*[]string{&want.Changed, &want.Added, &want.Removed} {
					if *l == nil {
						*l = []string{}
					}
				}
				if diff := cmp.Diff(want, outcomeOf(rep)); diff != "" {
					var md strings.Builder
					rep.Markdown(&md)
					t.Errorf("outcome (-want +got):\n%s\n%s", diff, md.String())
				}
				if rep.Identical != rep.Compared-len(rep.Changed) || rep.Compared < 10 {
					t.Errorf("compared %d, identical %d, changed %d", rep.Compared, rep.Identical, len(rep.Changed))
				}
				for _, d := range rep.Changed {
					if !strings.Contains(d.Diff, "\n@@ ") {
						t.Errorf("%s: diff has no hunk:\n%s", d.Name, d.Diff)
					}
				}
			})
		}
	}
}

// TestFunctionsCounted checks that static functions, cold pieces and
// constprop clones are functions of their own, with and without
// -ffunction-sections.
func TestFunctionsCounted(t *testing.T) {
	for _, flags := range [][]string{nil, {"-ffunction-sections"}} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) {
			dir := t.TempDir()
			buildTree(t, dir, map[string]string{"m": fixture}, flags...)
			o, err := readObject(dir, filepath.Join(dir, "ext/mysqlnd/m.o"), "m.o")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range o.funcs {
				got = append(got, f.name)
			}
			for _, want := range []string{"bump", "twice", "greet", "weigh", "scale", "dispatch", "total", "total.cold", "complain.constprop.0"} {
				if !slices.Contains(got, want) {
					t.Errorf("function %s not found in %v", want, got)
				}
			}
		})
	}
}

// TestTargetNames checks how references are named in a listing: literals,
// statics through section symbols (with the bias of a trailing immediate),
// calls the assembler resolved, the jump table and the cold piece.
func TestTargetNames(t *testing.T) {
	dir := t.TempDir()
	src := fixture + "int flag(void) { static char seen; if (seen) return 1; seen = 1; return 0; }\n"
	buildTree(t, dir, map[string]string{"m": src})
	o, err := readObject(dir, filepath.Join(dir, "ext/mysqlnd/m.o"), "m.o")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string][]string{}
	for _, f := range o.funcs {
		for _, r := range f.refs {
			targets[f.name] = append(targets[f.name], r.kind+" "+r.target)
		}
	}
	tests := []struct {
		fn   string
		want string
	}{
		{"greet", `R_X86_64_PC32 "hello, %s\n"`},
		{"dispatch", `R_X86_64_PC32 "five"`},
		{"twice", "pc-relative bump"},
		{"weigh", "R_X86_64_PC32 weights"},
		{"bump", "R_X86_64_PC32 counter"},
		{"scale", "R_X86_64_PC32 <const 0000000000000440>"},
		{"total", "R_X86_64_PC32 total.cold"},
		{"total.cold", "pc-relative complain.constprop.0"},
		{"flag", "R_X86_64_PC32 seen.0"},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			if !slices.Contains(targets[tt.fn], tt.want) {
				t.Errorf("%s: no %q in %q", tt.fn, tt.want, targets[tt.fn])
			}
		})
	}
	var table bool
	for _, tg := range targets["dispatch"] {
		table = table || strings.HasPrefix(tg, "R_X86_64_PC32 <.rodata ")
	}
	if !table {
		t.Errorf("dispatch: no anonymous jump table among %q", targets["dispatch"])
	}
}

func TestCompareDirsErrors(t *testing.T) {
	good := t.TempDir()
	buildTree(t, good, map[string]string{"m": fixture})
	obj, err := os.ReadFile(filepath.Join(good, "ext/mysqlnd/m.o"))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exeBytes, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		file []byte // written as ext/mysqlnd/bad.o; nil: none
		dir  string // base dir instead of a fresh one
		opt  Options
		want []string // substrings of the error
	}{
		{name: "missing dir", dir: "/nonexistent/patchproof", want: []string{"/nonexistent/patchproof"}},
		{name: "no objects", file: nil, want: []string{"no object files"}},
		{name: "not ELF", file: []byte("# bad.lo - a libtool object file\n"), want: []string{"bad.o", "not an ELF file"}},
		{name: "empty file", file: []byte{}, want: []string{"bad.o", "not an ELF file"}},
		{name: "truncated header", file: obj[:40], want: []string{"bad.o", "truncated"}},
		{name: "truncated half", file: obj[:len(obj)/2], want: []string{"bad.o"}},
		{name: "truncated by one byte", file: obj[:len(obj)-1], want: []string{"bad.o"}},
		{name: "an executable", file: exeBytes, want: []string{"bad.o", "not a relocatable object"}},
		{name: "bad pattern", opt: Options{Objects: "ext/[x"}, dir: good, want: []string{"ext/[x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.dir
			if base == "" {
				base = t.TempDir()
				if tt.file != nil {
					p := filepath.Join(base, "ext/mysqlnd/bad.o")
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, tt.file, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			_, err := CompareDirs(base, good, tt.opt)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// A build whose ext/mysqlnd is a link to a directory outside it (the
// host's objects, say) is not read through, nor are the names of the
// files there listed: the comparison fails, naming the link.
func TestCompareDirsLinkedDirectory(t *testing.T) {
	good := t.TempDir()
	buildTree(t, good, map[string]string{"m": fixture})
	outside := t.TempDir()
	buildTree(t, outside, map[string]string{"m": fixture})
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "ext"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "ext/mysqlnd"), filepath.Join(base, "ext/mysqlnd")); err != nil {
		t.Fatal(err)
	}
	rep, err := CompareDirs(base, good, Options{})
	if err == nil {
		t.Fatalf("compared %d functions read through the link", rep.Compared)
	}
	if strings.Contains(err.Error(), "m.o") || !strings.Contains(err.Error(), "ext/mysqlnd is a link, not followed") {
		t.Errorf("error %q names the host's file, or not the link", err)
	}
}

// TestTruncatedEverywhere cuts a real object at every length: an error each
// time, never a panic.
func TestTruncatedEverywhere(t *testing.T) {
	dir := t.TempDir()
	buildTree(t, dir, map[string]string{"m": fixture})
	obj, err := os.ReadFile(filepath.Join(dir, "ext/mysqlnd/m.o"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.o")
	for n := 0; n < len(obj); n++ {
		if err := os.WriteFile(p, obj[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readObject(filepath.Dir(p), p, "cut.o"); err == nil {
			t.Errorf("cut at %d of %d bytes: no error", n, len(obj))
		}
	}
}

// TestFallbackToObjectDir compares a build tree with a bare directory of
// objects: the pattern matches nothing there, so its *.o are taken under
// the pattern's directory.
func TestFallbackToObjectDir(t *testing.T) {
	base, head := t.TempDir(), t.TempDir()
	buildTree(t, base, map[string]string{"m": fixture})
	buildTree(t, head, map[string]string{"m": fixture})
	rep, err := CompareDirs(base, filepath.Join(head, "ext", "mysqlnd"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.AllIdentical() || rep.Compared == 0 {
		t.Errorf("got %s, %d changed, %d added, %d removed", rep.Summary(), len(rep.Changed), len(rep.Added), len(rep.Removed))
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "*.o") {
		t.Errorf("warnings %q, want one about the fallback", rep.Warnings)
	}
}
