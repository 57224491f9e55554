package abi

import (
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchproof/patchproof/verify/verdict"
)

func needGCC(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
}

// side is a crafted source tree and its build: an installed header
// (ext/mysqlnd/mysqlnd_structs.h, installed as its directory is), a
// header that is not installed, and a library made of code using both.
type side struct {
	header  string // the installed header's body
	private string // ext/foo/foo_private.h's body: not installed
	code    string // more C, after the includes
	apiNo   string // PHP_API_VERSION
}

const baseHeader = `struct st_stats { int a; long b; char buf[8]; };
typedef struct st_stats STATS;
typedef struct { int x; union { int i; double d; } u; } ANON;
enum mode { MODE_A, MODE_B };
`

const baseCode = `STATS g_stats; ANON g_anon; enum mode g_mode;
int php_foo(void) { return g_stats.a; }
`

func (s side) build(t *testing.T) Input {
	t.Helper()
	dir := t.TempDir()
	apiNo := s.apiNo
	if apiNo == "" {
		apiNo = "20220829"
	}
	files := map[string]string{
		"configure.ac":                  "PHP_INSTALL_HEADERS([Zend/ TSRM/ include/ main/ main/streams/])\n",
		"ext/mysqlnd/config9.m4":        "if test \"$PHP_MYSQLND\" != \"no\"; then\n  PHP_INSTALL_HEADERS([ext/mysqlnd/])\nfi\n",
		"ext/foo/config.m4":             "PHP_INSTALL_HEADERS([ext/foo], [php_foo.h])\n",
		"main/php.h":                    "#define PHP_API_VERSION " + apiNo + "\n",
		"Zend/zend_modules.h":           "#define ZEND_MODULE_API_NO 20220829\n",
		"Zend/zend_extensions.h":        "#define ZEND_EXTENSION_API_NO\t420220829\n",
		"ext/mysqlnd/mysqlnd_structs.h": s.header,
		"ext/foo/foo_private.h":         "struct foo_private { " + s.private + " };\n",
		"ext/foo/lib.c":                 "#include \"ext/mysqlnd/mysqlnd_structs.h\"\n#include \"ext/foo/foo_private.h\"\nstatic struct foo_private g_private;\nstruct foo_private *php_private(void) { return &g_private; }\n" + s.code,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("gcc", "-g", "-O2", "-shared", "-fPIC", "-I.", "-o", "libphp.so", "ext/foo/lib.c")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	lib := filepath.Join(dir, "libphp.so")
	return Input{Source: dir, Debug: []string{lib}, Binaries: []string{lib}}
}

// brief is what a test says of a change.
type brief struct {
	Kind    ChangeKind
	Subject string
	Member  string
	Break   bool
}

func TestCompare(t *testing.T) {
	needGCC(t)
	base := side{header: baseHeader, private: "int p;", code: baseCode}
	tests := []struct {
		name string
		head side
		want []brief
	}{
		{"unchanged", base, nil},
		{"a header that is not installed changes", side{header: baseHeader, private: "long p; int q;", code: baseCode}, nil},
		{"member added", side{header: strings.Replace(baseHeader, "char buf[8]; }", "char buf[8]; int c; }", 1), code: baseCode}, []brief{
			{SizeChanged, "struct st_stats", "", true},
			{MemberAdded, "struct st_stats", "c", true},
			{SizeChanged, "typedef STATS", "", true},
			{SymbolChanged, "libphp.so: g_stats", "", true},
		}},
		{"member removed", side{header: strings.Replace(baseHeader, "long b; ", "", 1), code: baseCode}, []brief{
			{SizeChanged, "struct st_stats", "", true},
			{MemberRemoved, "struct st_stats", "b", true},
			{MemberMoved, "struct st_stats", "buf", true},
			{SizeChanged, "typedef STATS", "", true},
			{SymbolChanged, "libphp.so: g_stats", "", true},
		}},
		{"member renamed", side{header: strings.Replace(baseHeader, "long b;", "long bb;", 1), code: baseCode}, []brief{
			{MemberRenamed, "struct st_stats", "bb", true},
		}},
		{"member re-typed", side{header: strings.Replace(baseHeader, "int a;", "long a;", 1), code: baseCode}, []brief{
			{MemberRetyped, "struct st_stats", "a", true},
		}},
		{"members reordered", side{header: strings.Replace(baseHeader, "int a; long b; char buf[8];", "int a; char buf[8]; long b;", 1), code: baseCode}, []brief{
			{MemberMoved, "struct st_stats", "b", true},
			{MemberMoved, "struct st_stats", "buf", true},
		}},
		{"struct grown", side{header: strings.Replace(baseHeader, "char buf[8];", "char buf[16];", 1), code: baseCode}, []brief{
			{SizeChanged, "struct st_stats", "", true},
			{MemberRetyped, "struct st_stats", "buf", true},
			{SizeChanged, "typedef STATS", "", true},
			{SymbolChanged, "libphp.so: g_stats", "", true},
		}},
		{"same-size type change", side{header: strings.Replace(baseHeader, "long b;", "unsigned long b;", 1), code: baseCode}, []brief{
			{LayoutCompatible, "struct st_stats", "b", false},
		}},
		// The union loses double's alignment: it moves, with its members.
		{"anonymous union's member re-typed", side{header: strings.Replace(baseHeader, "double d;", "char d[16];", 1), code: baseCode}, []brief{
			{SizeChanged, "typedef ANON", "", true},
			{MemberMoved, "typedef ANON", "u", true},
			{MemberMoved, "typedef ANON", "u.i", true},
			{MemberRetyped, "typedef ANON", "u.d", true},
			{MemberMoved, "typedef ANON", "u.d", true},
			{SymbolChanged, "libphp.so: g_anon", "", true},
		}},
		{"enumerator added", side{header: strings.Replace(baseHeader, "MODE_B }", "MODE_B, MODE_C }", 1), code: baseCode}, []brief{
			{EnumeratorAdded, "enum mode", "MODE_C", false},
		}},
		{"exported function removed", side{header: baseHeader, code: strings.Replace(baseCode, "int php_foo(void) { return g_stats.a; }\n", "", 1)}, []brief{
			{SymbolRemoved, "libphp.so: php_foo", "", true},
		}},
		{"exported function added", side{header: baseHeader, code: baseCode + "int php_bar(void) { return 2; }\n"}, []brief{
			{SymbolAdded, "libphp.so: php_bar", "", false},
		}},
		{"API number bumped", side{header: baseHeader, code: baseCode, apiNo: "20220830"}, []brief{
			{APINumberChanged, "PHP_API_VERSION", "", true},
		}},
	}
	bin := base.build(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.head.private == "" {
				tt.head.private = base.private
			}
			v, err := Compare("NTS", bin, tt.head.build(t))
			if err != nil {
				t.Fatal(err)
			}
			// The walk's bounds leave a compiler's DWARF alone.
			if len(v.Warnings) > 0 {
				t.Errorf("warnings %q of gcc's DWARF", v.Warnings)
			}
			var got []brief
			for _, c := range v.Changes {
				got = append(got, brief{c.Kind, c.Subject, c.Member, c.Break})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("changes (-want +got):\n%s\n%+v", diff, v.Changes)
			}
			breaks := false
			for _, b := range tt.want {
				breaks = breaks || b.Break
			}
			r := &Result{Variants: []*Variant{v}}
			if err := judge(r, true, Fail); breaks != errors.Is(err, verdict.ErrCheckFailed) {
				t.Errorf("Judge on a stable branch: %v, want a failure: %v", err, breaks)
			}
			for _, j := range []struct {
				stable bool
				mode   Mode
			}{{false, Fail}, {true, Warn}, {true, Off}} {
				if err := judge(r, j.stable, j.mode); err != nil {
					t.Errorf("Judge(stable %v, %s) = %v, want nil", j.stable, j.mode, err)
				}
			}
		})
	}
}

// The section names each change with its header and line, and a stable
// branch's break as failing.
func TestSection(t *testing.T) {
	needGCC(t)
	base := side{header: baseHeader, private: "int p;", code: baseCode}
	head := side{header: strings.Replace(baseHeader, "char buf[8]; }", "char buf[8]; int c; }", 1), private: "int p;", code: baseCode}
	v, err := Compare("ZTS", base.build(t), head.build(t))
	if err != nil {
		t.Fatal(err)
	}
	nts, err := Compare("NTS", base.build(t), base.build(t))
	if err != nil {
		t.Fatal(err)
	}
	r := &Result{Variants: []*Variant{nts, v}}
	if err := judge(r, true, Fail); err == nil {
		t.Fatal("Judge passed a break on a stable branch")
	}
	var b strings.Builder
	if err := r.WriteSection(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"✅ NTS: ABI unchanged", "❌ ZTS: 4 ABI breaks", "`ext/mysqlnd/mysqlnd_structs.h:1`", "| ❌ `struct st_stats.c` | member added |", "A break fails this stable branch."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, b.String())
		}
	}
	if got, want := r.Cell(), "✅ NTS: ABI unchanged<br>❌ ZTS: 4 ABI breaks"; got != want {
		t.Errorf("Cell() = %q, want %q", got, want)
	}
	judge(r, false, Fail)
	if got, want := r.Cell(), "✅ NTS: ABI unchanged<br>ℹ️ ZTS: 4 ABI breaks (information: not a stable branch)"; got != want {
		t.Errorf("on master, Cell() = %q, want %q", got, want)
	}
}

// A build with -g must not change the machine code codediff compares:
// the check's debug info comes free of that.
func TestDebugInfoKeepsMachineCode(t *testing.T) {
	needGCC(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "t.c")
	code := `#include <string.h>
struct st { long a; int b[8]; char *name; };
static int helper(struct st *s, int n) { int t = 0; for (int i = 0; i < n && i < 8; i++) t += s->b[i] * (int)s->a; return t; }
int api(struct st *s, const char *p) { if (!s) return -1; s->name = strdup(p); return helper(s, (int)strlen(p)) + helper(s, 3); }
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	text := func(flags ...string) []byte {
		obj := filepath.Join(dir, strings.Join(flags, "")+".o")
		if out, err := exec.Command("gcc", append(flags, "-fPIC", "-c", src, "-o", obj)...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		f, err := elf.Open(obj)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, err := f.Section(".text").Data()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if plain, debug := text("-O2"), text("-O2", "-g"); string(plain) != string(debug) {
		t.Errorf("-O2 -g emits other machine code than -O2: %d bytes against %d", len(debug), len(plain))
	}
}
