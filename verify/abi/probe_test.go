package abi

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hostCompiler runs the probe's gcc on this host, as builders.Host does
// for the pipeline.
type hostCompiler struct{}

func (hostCompiler) Compile(ctx context.Context, c CompileCmd) (runErr, execErr error) {
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdout, cmd.Stderr = c.Output, c.Output
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); ok {
		return err, nil
	}
	return nil, err
}

// probeTree is a crafted build directory: installed headers as php-src
// lays them out, a php_config.h that defines ZTS or not, a header of
// another platform, one that does not compile, one that compiles only
// after its directory's own header, and the VM's handlers.
func probeTree(t *testing.T, zts bool, structs string) string {
	t.Helper()
	dir := t.TempDir()
	config := "#define PHP_OS \"Linux\"\n"
	if zts {
		config += "#define ZTS 1\n"
	}
	files := map[string]string{
		"configure.ac":           "PHP_INSTALL_HEADERS([Zend/ TSRM/ include/ main/])\n",
		"ext/mysqlnd/config9.m4": "PHP_INSTALL_HEADERS([ext/mysqlnd/])\n",
		"ext/other/config.m4":    "PHP_INSTALL_HEADERS([ext/other], [php_other.h])\n",
		"main/php_config.h":      config,
		"main/php.h":             guard("PHP_H", "#include \"php_config.h\"\n#include \"zend.h\"\n#define PHP_API_VERSION 20220829\n"),
		"Zend/zend.h":            guard("ZEND_H", "#include <stddef.h>\n#include <stdint.h>\n#include \"TSRM.h\"\ntypedef struct _zval { uint64_t value; uint32_t type; } zval;\n"),
		"Zend/zend_modules.h":    "#define ZEND_MODULE_API_NO 20220829\n",
		"Zend/zend_extensions.h": "#define ZEND_EXTENSION_API_NO 420220829\n",
		"Zend/zend_vm_execute.h": "static int handler(void) { return UNDEFINED_MACRO; }\n",
		"TSRM/TSRM.h":            guard("TSRM_H", "#ifdef ZTS\n#include <pthread.h>\ntypedef pthread_mutex_t *MUTEX_T;\n#endif\n"),
		"TSRM/tsrm_win32.h":      "#include <windows.h>\n",
		// mysqlnd.h is included first: the others need what it defines.
		"ext/mysqlnd/mysqlnd.h":             "#include \"mysqlnd_portability.h\"\n#include \"mysqlnd_structs.h\"\n",
		"ext/mysqlnd/mysqlnd_portability.h": "#ifndef MYSQLND_PORTABILITY_H\n#define MYSQLND_PORTABILITY_H\ntypedef uint64_t mysqlnd_stat_t;\n#endif\n",
		"ext/mysqlnd/mysqlnd_structs.h":     "#ifndef MYSQLND_STRUCTS_H\n#define MYSQLND_STRUCTS_H\n" + structs + "\n#endif\n",
		"ext/mysqlnd/mysqlnd_broken.h":      "struct st_broken { int a; };\nstruct st_broken { long a; };\n",
		"ext/other/php_other.h":             "typedef struct { zval z; } other_t;\n",
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
	return dir
}

// guard is a header's body inside its include guard, as php-src's are.
func guard(name, body string) string {
	return "#ifndef " + name + "\n#define " + name + "\n" + body + "#endif\n"
}

// The statistics of mysqlnd_structs.h before and after a change like the
// demo's: the mutex, which only ZTS has, goes.
const (
	statsBase = "typedef struct st_mysqlnd_stats { mysqlnd_stat_t *values; size_t count;\n#ifdef ZTS\n MUTEX_T LOCK_access;\n#endif\n} MYSQLND_STATS;"
	statsHead = "typedef struct st_mysqlnd_stats { mysqlnd_stat_t *values; size_t count; } MYSQLND_STATS;"
)

func probe(t *testing.T, dir string) (*Probe, Input) {
	t.Helper()
	p, err := ProbeHeaders(context.Background(), hostCompiler{}, ProbeOptions{Source: dir, Build: dir, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return p, Input{Source: dir, Debug: []string{p.Object}, Roots: []string{dir}, LeftOut: p.LeftOut}
}

// The probe compiles every installed header that compiles after main/php.h
// and the others, leaving out, with gcc's reason, those that do not.
func TestProbeHeaders(t *testing.T) {
	needGCC(t)
	p, _ := probe(t, probeTree(t, false, statsBase))
	want := []string{
		"main/php.h", "TSRM/TSRM.h", "Zend/zend.h", "ext/mysqlnd/mysqlnd.h", "ext/other/php_other.h", "Zend/zend_extensions.h",
		"Zend/zend_modules.h", "ext/mysqlnd/mysqlnd_portability.h", "ext/mysqlnd/mysqlnd_structs.h", "main/php_config.h",
	}
	if diff := cmp.Diff(want, p.Headers); diff != "" {
		t.Errorf("headers compiled (-want +got):\n%s", diff)
	}
	got := map[string]string{}
	for _, l := range p.LeftOut {
		got[l.Header] = l.Why
	}
	for h, why := range map[string]string{
		"TSRM/tsrm_win32.h":            "TSRM/tsrm_win32.h:1: windows.h: No such file or directory",
		"ext/mysqlnd/mysqlnd_broken.h": "ext/mysqlnd/mysqlnd_broken.h:2: redefinition of 'struct st_broken'",
		"Zend/zend_vm_execute.h":       notHeaders["Zend/zend_vm_execute.h"],
	} {
		if got[h] != why {
			t.Errorf("%s left out for %q, want %q", h, got[h], why)
		}
	}
	if len(got) != 3 {
		t.Errorf("left out %v, want 3 headers", p.LeftOut)
	}
	// One preprocessing a round, and a compile where it passed: the
	// missing windows.h, then the redefinition, then the object.
	if p.Compiles != 5 {
		t.Errorf("%d compiles, want 5", p.Compiles)
	}
}

// A struct whose member only ZTS has changes only ZTS's layout: the NTS
// probe of base and head finds nothing, the ZTS probe the change; a type
// no object uses is there all the same.
func TestProbeVariants(t *testing.T) {
	needGCC(t)
	for _, tt := range []struct {
		zts  bool
		want []brief
	}{
		{false, nil},
		{true, []brief{
			{SizeChanged, "struct st_mysqlnd_stats", "", true},
			{MemberRemoved, "struct st_mysqlnd_stats", "LOCK_access", true},
			{SizeChanged, "typedef MYSQLND_STATS", "", true},
		}},
	} {
		name := map[bool]string{false: "nts", true: "zts"}[tt.zts]
		t.Run(name, func(t *testing.T) {
			_, base := probe(t, probeTree(t, tt.zts, statsBase))
			_, head := probe(t, probeTree(t, tt.zts, statsHead))
			v, err := Compare(name, base, head)
			if err != nil {
				t.Fatal(err)
			}
			var got []brief
			for _, c := range v.Changes {
				got = append(got, brief{c.Kind, c.Subject, c.Member, c.Break})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			for _, ty := range []string{"struct st_mysqlnd_stats", "typedef other_t", "typedef zval"} {
				if !strings.Contains(strings.Join(typeKeys(t, head), "\n"), ty) {
					t.Errorf("the probe has no %s", ty)
				}
			}
			if len(v.LeftOut) != 3 {
				t.Errorf("left out %+v, want 3 headers", v.LeftOut)
			}
		})
	}
}

func typeKeys(t *testing.T, in Input) []string {
	t.Helper()
	s, err := read(in)
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for k := range s.types {
		ks = append(ks, k)
	}
	return ks
}

// A header left out on one side alone (head broke it) has its types
// compared on neither: they are not removed.
func TestProbeLeftOutOneSide(t *testing.T) {
	needGCC(t)
	baseDir := probeTree(t, false, statsBase)
	headDir := probeTree(t, false, statsBase)
	if err := os.WriteFile(filepath.Join(headDir, "ext/other/php_other.h"), []byte("typedef struct { zval z; } other_t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, base := probe(t, baseDir)
	_, head := probe(t, headDir)
	v, err := Compare("nts", base, head)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Changes) != 0 {
		t.Errorf("changes %+v, want none", v.Changes)
	}
	found := false
	for _, l := range v.LeftOut {
		found = found || l.Header == "ext/other/php_other.h"
	}
	if !found {
		t.Errorf("left out %+v, want ext/other/php_other.h among them", v.LeftOut)
	}
}

func TestCulprits(t *testing.T) {
	out := `In file included from /b/ext/mysqlnd/mysqlnd.h:52,
                 from probe.c:3:
/b/ext/mysqlnd/mysqlnd_portability.h:56:10: error: unknown type name 'x'
/b/ext/mysqlnd/mysqlnd_portability.h:57:10: error: a second one
In file included from probe.c:7:
/b/Zend/zend_vm_trace.h: In function 'f':
/b/Zend/zend_vm_trace.h:4:2: warning: implicit declaration
/b/Zend/zend_vm_trace.h:5:2: error: 'y' undeclared
In file included from probe.c:3:
/b/ext/mysqlnd/mysqlnd_portability.h:56: note: previous definition
/b/ext/mysqlnd/mysqlnd_portability.h:60:1: error: a third one
probe.c:9:10: fatal error: gone.h: No such file or directory
compilation terminated.
`
	want := map[int]string{
		3: "ext/mysqlnd/mysqlnd_portability.h:56: unknown type name 'x'",
		7: "Zend/zend_vm_trace.h:5: 'y' undeclared",
		9: "probe.c:9: gone.h: No such file or directory",
	}
	if diff := cmp.Diff(want, culprits(out, "/b")); diff != "" {
		t.Errorf("culprits (-want +got):\n%s", diff)
	}
}

// The probe of real builds: the demo's base and head, NTS and ZTS, where
// scripts/test names them (PATCHPROOF_NTS_BUILD and
// PATCHPROOF_TEST_NTS_HEAD_BUILD, PATCHPROOF_TEST_ZTS_BUILD and
// PATCHPROOF_TEST_ZTS_HEAD_BUILD). Each build's directory is its own
// source tree too: the build copied it. The builds are read, never
// written: the probe writes in a directory of its own.
func TestProbeRealBuilds(t *testing.T) {
	needGCC(t)
	for _, v := range []struct{ name, base, head string }{
		{"nts", "PATCHPROOF_NTS_BUILD", "PATCHPROOF_TEST_NTS_HEAD_BUILD"},
		{"zts", "PATCHPROOF_TEST_ZTS_BUILD", "PATCHPROOF_TEST_ZTS_HEAD_BUILD"},
	} {
		t.Run(v.name, func(t *testing.T) {
			baseDir, headDir := os.Getenv(v.base), os.Getenv(v.head)
			if baseDir == "" || headDir == "" {
				t.Skipf("set %s and %s to the demo's base and head builds (scripts/test does)", v.base, v.head)
			}
			var in [2]Input
			for i, dir := range []string{baseDir, headDir} {
				p, err := ProbeHeaders(context.Background(), hostCompiler{}, ProbeOptions{Source: dir, Build: dir, Dir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: %d headers compiled, %d left out, %d compiles, %.1f s", dir, len(p.Headers), len(p.LeftOut), p.Compiles, p.Duration.Seconds())
				for _, l := range p.LeftOut {
					t.Logf("  left out %s: %s", l.Header, l.Why)
				}
				if !slices.Contains(p.Headers, "ext/mysqlnd/mysqlnd_structs.h") {
					t.Errorf("%s: mysqlnd_structs.h was not compiled", dir)
				}
				in[i] = Input{Source: dir, Debug: []string{p.Object}, Binaries: []string{filepath.Join(dir, "sapi/cli/php")}, Roots: []string{dir}, LeftOut: p.LeftOut}
			}
			c, err := Compare(v.name, in[0], in[1])
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d types, %d symbols, %d changes", c.Types, c.Symbols, len(c.Changes))
			var stats []string
			for _, ch := range c.Changes {
				t.Logf("  %s (break %v)", ch, ch.Break)
				if strings.Contains(ch.Subject, "st_mysqlnd_stats") || ch.Subject == "typedef MYSQLND_STATS" {
					stats = append(stats, ch.String())
				}
			}
			if c.Types < 1000 {
				t.Errorf("%d types: the probe covered too little", c.Types)
			}
			// The atomic statistics change the struct under ZTS alone:
			// its mutex goes.
			switch {
			case v.name == "nts" && len(stats) != 0:
				t.Errorf("NTS: %v, want struct st_mysqlnd_stats unchanged", stats)
			case v.name == "zts" && !slices.Contains(stats, "struct st_mysqlnd_stats.LOCK_access: member removed (pthread_mutex_t * at offset 16)"):
				t.Errorf("ZTS: %v, want LOCK_access removed", stats)
			}
		})
	}
}

// The section says where a variant's layouts came from and which headers
// the probe left out, each with its reason.
func TestSectionProbe(t *testing.T) {
	r := &Result{Policy: string(Fail), Variants: []*Variant{{
		Name: "nts", Headers: 57, Types: 1220, Symbols: 2279,
		Layouts: "header probes", ProbeMS: 11300,
		LeftOut: []LeftOut{{Header: "TSRM/tsrm_win32.h", Why: "TSRM/tsrm_win32.h:21: windows.h: No such file or directory"}},
	}}}
	var b strings.Builder
	if err := r.WriteSection(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- ✅ nts: ABI unchanged (1220 types of 57 installed headers, 2279 exported symbols; layouts from header probes, 11.3 s; 1 header left out)",
		"<details><summary>nts: 1 installed header the probe left out, whose types are not compared</summary>",
		"- `TSRM/tsrm_win32.h`: TSRM/tsrm_win32.h:21: windows.h: No such file or directory",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, b.String())
		}
	}
}
