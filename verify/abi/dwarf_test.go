package abi

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/safefs"
	"github.com/patchproof/patchproof/internal/safefs/safefstest"
)

// cyclic is a header whose DWARF the tests make cycles of: typedefs of
// typedefs, a const, a pointer and a member to point back.
const cyclic = `struct st_stats { int a; long b; char buf[8]; };
typedef struct st_stats STATS;
typedef STATS STATS2;
typedef const STATS CSTATS;
struct st_node { struct st_node *next; int v; STATS s; };
`

const cyclicCode = "STATS g1; STATS2 g2; CSTATS g3; struct st_node g4;\n"

// probed is a source tree whose installed header is header, and gcc -g's
// object of code using it (the DWARF a header probe makes), crafted by
// craft and written as probe.o in the tree.
func probed(t *testing.T, header, code string, craft func([]byte) []byte, flags ...string) Input {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"configure.ac":                  "PHP_INSTALL_HEADERS([Zend/ main/])\n",
		"ext/mysqlnd/config9.m4":        "PHP_INSTALL_HEADERS([ext/mysqlnd/])\n",
		"main/php.h":                    "#define PHP_API_VERSION 20220829\n",
		"Zend/zend_modules.h":           "#define ZEND_MODULE_API_NO 20220829\n",
		"Zend/zend_extensions.h":        "#define ZEND_EXTENSION_API_NO 420220829\n",
		"ext/mysqlnd/mysqlnd_structs.h": header,
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
	src := fmt.Sprintf("#include %q\n%s", filepath.Join(dir, "ext/mysqlnd/mysqlnd_structs.h"), code)
	obj := safefstest.Compile(t, src, append([]string{"-g"}, flags...)...)
	if craft != nil {
		obj = craft(obj)
	}
	p := filepath.Join(dir, "probe.o")
	if err := os.WriteFile(p, obj, 0o644); err != nil {
		t.Fatal(err)
	}
	return Input{Source: dir, Debug: []string{p}}
}

// retype points the DW_AT_type of the DIE of tag and name (or of what
// that DIE's type is, through) at the DIE of tag to and name toName.
func retype(t *testing.T, tag dwarf.Tag, name string, through bool, to dwarf.Tag, toName string) func([]byte) []byte {
	return func(obj []byte) []byte {
		types := safefstest.Types(t, obj)
		from := types[tag][name]
		if through {
			from = safefstest.TypeOf(t, obj, from)
		}
		target := types[to][toName]
		if toName == "" {
			target = from
		}
		return safefstest.Retype(t, obj, from, target)
	}
}

// chain is a header of n typedefs, each of the one before, and code using
// the last.
func chain(n int) (string, string) {
	var b strings.Builder
	b.WriteString("typedef int T0;\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "typedef T%d T%d;\n", i-1, i)
	}
	return b.String(), fmt.Sprintf("T%d g;\n", n-1)
}

// nest is a header of n structs, each holding the one before.
func nest(n int) (string, string) {
	var b strings.Builder
	b.WriteString("struct s0 { int x; };\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "struct s%d { struct s%d a; };\n", i, i-1)
	}
	return b.String(), fmt.Sprintf("struct s%d g;\n", n-1)
}

// links is a header of n structs, each pointing to the next.
func links(n int) (string, string) {
	var b strings.Builder
	for i := 0; i < n-1; i++ {
		fmt.Fprintf(&b, "struct s%d { struct s%d *next; };\n", i, i+1)
	}
	fmt.Fprintf(&b, "struct s%d { int x; };\n", n-1)
	return b.String(), "struct s0 g;\n"
}

// A build's DWARF whose types are their own (a typedef of itself, a pair
// of typedefs, a const of itself), or chains of typedefs deeper than a
// compiler writes, is an error of ErrTypeGraph; a compressed section that
// claims too much is ErrTooLarge. Before the fix, the cycles took the
// test binary down with Go's "fatal error: stack overflow" (in
// debug/dwarf's Size), and the bomb with "fatal error: out of memory"
// under 3 GB of address space.
func TestDWARFRejected(t *testing.T) {
	chained, chainCode := chain(maxTypeDepth + 2)
	tests := []struct {
		name string
		in   func(t *testing.T) Input
		is   error
		want string
	}{
		{"typedef of itself", func(t *testing.T) Input {
			return probed(t, cyclic, cyclicCode, retype(t, dwarf.TagTypedef, "STATS", false, dwarf.TagTypedef, "STATS"))
		}, ErrTypeGraph, "a cycle of 1 types"},
		{"two typedefs of each other", func(t *testing.T) Input {
			return probed(t, cyclic, cyclicCode, retype(t, dwarf.TagTypedef, "STATS", false, dwarf.TagTypedef, "STATS2"))
		}, ErrTypeGraph, "a cycle of 2 types"},
		{"const of itself", func(t *testing.T) Input {
			return probed(t, cyclic, cyclicCode, retype(t, dwarf.TagTypedef, "CSTATS", true, 0, ""))
		}, ErrTypeGraph, "a cycle of 1 types"},
		{"typedefs too deep", func(t *testing.T) Input { return probed(t, chained, chainCode, nil) },
			ErrTypeGraph, "a chain of more than 100 types"},
		{"a compression header claims 1 GiB", func(t *testing.T) Input {
			return probed(t, cyclic, cyclicCode, func(obj []byte) []byte {
				return safefstest.SetCompressedSize(t, obj, ".debug_info", 1<<30)
			}, "-gz=zlib")
		}, safefs.ErrTooLarge, "section .debug_info: 1073741824 bytes"},
		{"a bomb of 300 MiB", func(t *testing.T) Input {
			return probed(t, cyclic, cyclicCode, func(obj []byte) []byte {
				return safefstest.Bomb(t, obj, ".debug_info", 300<<20)
			}, "-gz=zlib")
		}, safefs.ErrTooLarge, "section .debug_info: 314572800 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in(t)
			inst, err := InstalledHeaders(in.Source)
			if err != nil {
				t.Fatal(err)
			}
			_, err = readTypes(in.Debug[0], inst, []string{in.Source}, map[string]*Type{})
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("readTypes = %v, want %v saying %q", err, tt.is, tt.want)
			}
		})
	}
}

// A type that points to or holds itself, or one nested deeper than a
// compiler writes, is laid out all the same, with "?" where the walk
// stopped and a warning: before the fix, the pointer's name and the
// struct's alignment recursed until Go's "fatal error: stack overflow".
func TestDWARFWalkBounded(t *testing.T) {
	nested, nestCode := nest(maxTypeDepth + 20)
	tests := []struct {
		name   string
		in     func(t *testing.T) Input
		key    string
		member string // whose type is want
		want   string
		warn   string
	}{
		{"a pointer to itself", func(t *testing.T) Input {
			return probed(t, cyclic, cyclicCode, retype(t, dwarf.TagMember, "next", true, 0, ""))
		}, "struct st_node", "next", "? *", "struct st_node: its DWARF has a type that holds or points to itself (an anonymous *dwarf.PtrType)"},
		{"a struct holding itself", func(t *testing.T) Input {
			return probed(t, cyclic, cyclicCode, retype(t, dwarf.TagMember, "s", false, dwarf.TagStructType, "st_node"))
		}, "struct st_node", "s", "struct st_node", "struct st_node: its DWARF has a type that holds or points to itself (*dwarf.StructType st_node)"},
		{"structs too deep", func(t *testing.T) Input { return probed(t, nested, nestCode, nil) },
			fmt.Sprintf("struct s%d", maxTypeDepth+19), "a", fmt.Sprintf("struct s%d", maxTypeDepth+18), "types more than 100 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in(t)
			inst, err := InstalledHeaders(in.Source)
			if err != nil {
				t.Fatal(err)
			}
			types := map[string]*Type{}
			warnings, err := readTypes(in.Debug[0], inst, []string{in.Source}, types)
			if err != nil {
				t.Fatal(err)
			}
			typ := types[tt.key]
			if typ == nil {
				t.Fatalf("no %s among %d types", tt.key, len(types))
			}
			if m := byName(typ.Members)[tt.member]; m.Type != tt.want {
				t.Errorf("%s.%s is %q, want %q", tt.key, tt.member, m.Type, tt.want)
			}
			if !strings.Contains(strings.Join(warnings, "\n"), tt.warn) {
				t.Errorf("warnings %q, want one saying %q", warnings, tt.warn)
			}
		})
	}
}

// The section shows a variant's warnings, escaped, next to its changes.
func TestSectionShowsWarnings(t *testing.T) {
	r := &Result{Variants: []*Variant{{Name: "nts", Warnings: []string{"head: struct st_node: its DWARF has a type that holds or points to itself (an anonymous *dwarf.PtrType); what lies there is named ?"}}}}
	var b strings.Builder
	if err := r.WriteSection(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "> warning: nts: head: struct st_node: its DWARF has a type that holds or points to itself") {
		t.Errorf("the section lacks the warning:\n%s", b.String())
	}
}
