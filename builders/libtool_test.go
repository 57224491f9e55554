package builders

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// realLibtool is the libtool of a real PHP build, from the environment
// variable scripts/test sets (the demo's builds).
func realLibtool(t *testing.T, env string) string {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		t.Skipf("set %s (a PHP build's directory; scripts/test does) to compare the shim with its libtool", env)
	}
	p := filepath.Join(dir, "libtool")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s names no build with a libtool: %v", env, err)
	}
	return p
}

// shimTree is a tree with the libtool at lt, a Makefile with PHP's LIBTOOL
// line, and the sources given.
func shimTree(t *testing.T, lt string, sources map[string]string) string {
	t.Helper()
	tree := t.TempDir()
	data, err := os.ReadFile(lt)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"libtool": string(data), "Makefile": "srcdir = x\nLIBTOOL = " + makeLibtool + "\nCC = gcc\n"}
	for name, text := range sources {
		files[name] = text
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(tree, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tree
}

// withPicMode is a copy of the libtool at lt configured with pic_mode.
func withPicMode(t *testing.T, lt, mode string) string {
	t.Helper()
	data, err := os.ReadFile(lt)
	if err != nil {
		t.Fatal(err)
	}
	// The first pic_mode line is the script's own (the per-tag sections
	// come after it); a ZTS build is configured --with-pic already.
	line := regexp.MustCompile(`(?m)^pic_mode=(default|yes|no)$`)
	s := string(data)
	loc := line.FindStringIndex(s)
	if loc == nil {
		t.Fatalf("%s: no pic_mode line to change", lt)
	}
	s = s[:loc[0]] + "pic_mode=" + mode + s[loc[1]:]
	p := filepath.Join(t.TempDir(), "libtool")
	if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// tool runs libtool's way (the tree's libtool) or the shim's, as make
// would with the shim's LIBTOOL argument, in a directory of its own.
type tool struct {
	tree, dir string
	shim      bool
}

func (tl tool) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	argv := []string{"/bin/bash", filepath.Join(tl.tree, "libtool"), "--silent", "--preserve-dup-deps"}
	if tl.shim {
		argv = append([]string{"/bin/sh", filepath.Join(tl.tree, shimName)}, argv...)
	}
	cmd := exec.Command(argv[0], append(argv[1:], args...)...)
	cmd.Dir = tl.dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// files returns every regular file under dir with its bytes.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sameFiles(t *testing.T, what string, libtool, shim map[string][]byte) {
	t.Helper()
	var names []string
	for n := range libtool {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if s, ok := shim[n]; !ok {
			t.Errorf("%s: libtool wrote %s, the shim did not", what, n)
		} else if !bytes.Equal(s, libtool[n]) {
			t.Errorf("%s: %s differs:\nlibtool: %q\nshim:    %q", what, n, trim(libtool[n]), trim(s))
		}
	}
	for n := range shim {
		if _, ok := libtool[n]; !ok {
			t.Errorf("%s: the shim wrote %s, libtool did not", what, n)
		}
	}
}

func trim(b []byte) []byte {
	if len(b) > 400 {
		return b[:400]
	}
	return b
}

// The shim compiles as the build's own libtool does, on both kinds of
// PHP build: a ZTS one with the Apache module (PIC and non-PIC objects)
// and an NTS one (non-PIC only): the same files, byte for byte (objects,
// .lo, dependency files), the same messages and exit status for a file
// that does not compile, and what it hands on to libtool (a link, an
// option it leaves out) is libtool's.
func TestLibtoolShimMatchesLibtool(t *testing.T) {
	for _, tt := range []struct{ name, env, picMode string }{
		{"zts with the Apache module, as configured", "PATCHPROOF_TEST_ZTS_BUILD", ""},
		{"zts with the Apache module, libtool's default", "PATCHPROOF_TEST_ZTS_BUILD", "default"},
		{"nts", "PATCHPROOF_NTS_BUILD", ""},
		// What configure --with-pic and --without-pic change in the script:
		// its pic_mode, which its compile mode reads.
		{"zts with the Apache module, --with-pic", "PATCHPROOF_TEST_ZTS_BUILD", "yes"},
		{"zts with the Apache module, --without-pic", "PATCHPROOF_TEST_ZTS_BUILD", "no"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lt := realLibtool(t, tt.env)
			if tt.picMode != "" {
				lt = withPicMode(t, lt, tt.picMode)
			}
			src := map[string]string{
				"a.c":    "#include \"a.h\"\nstatic int n;\nint f(int x) { return x + N + n++; }\nint main(void) { return f(0) - N - (QUOTED[1] != ' '); }\n",
				"a.h":    "#define N 41\n",
				"bad.c":  "int f(void) { return undeclared; }\n",
				"warn.c": "int g(int x) { int unused; return x; }\n",
				"asm.S":  ".text\n.globl h\nh:\n\tret\n",
			}
			tree := shimTree(t, lt, src)
			arg, err := installShim(tree)
			if err != nil || arg == "" {
				t.Fatalf("installShim: %q, %v; want the shim for libtool %s", arg, err, lt)
			}
			if want := "LIBTOOL=/bin/sh " + filepath.Join(tree, shimName) + " " + makeLibtool; arg != want {
				t.Fatalf("make argument %q, want %q", arg, want)
			}
			lib := tool{tree: tree, dir: filepath.Join(tree, "L")}
			shim := tool{tree: tree, dir: filepath.Join(tree, "S"), shim: true}
			compile := func(tl tool, file, obj string, extra ...string) (string, error) {
				args := append([]string{"--tag=CC", "--mode=compile", "gcc", "-I" + tree, "-O2", "-fpie", "-Wall", `-DQUOTED="a b"`}, extra...)
				args = append(args, "-c", filepath.Join(tree, file), "-o", obj, "-MMD", "-MF", strings.TrimSuffix(obj, ".lo")+".dep", "-MT", obj)
				return tl.run(t, args...)
			}
			for _, tl := range []tool{lib, shim} {
				if err := os.MkdirAll(filepath.Join(tl.dir, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range []struct {
				file, obj string
				extra     []string
				fails     bool
			}{
				{"a.c", "sub/a.lo", nil, false},
				{"warn.c", "warn.lo", nil, false},
				{"asm.S", "sub/asm.lo", nil, false},
				{"bad.c", "sub/bad.lo", nil, true},
				{"a.c", "sub/prefer.lo", []string{"-prefer-pic"}, false}, // handed to libtool
			} {
				lout, lerr := compile(lib, c.file, c.obj, c.extra...)
				sout, serr := compile(shim, c.file, c.obj, c.extra...)
				if (lerr != nil) != c.fails || (serr != nil) != c.fails {
					t.Fatalf("%s: libtool %v, shim %v; want failure %v\n%s\n%s", c.file, lerr, serr, c.fails, lout, sout)
				}
				if lout != sout {
					t.Errorf("%s: libtool said %q, the shim %q", c.file, lout, sout)
				}
			}
			if !strings.Contains(func() string { o, _ := compile(shim, "bad.c", "sub/bad.lo"); return o }(), "undeclared") {
				t.Error("the shim kept the compiler's error from the log")
			}
			sameFiles(t, tt.name, files(t, lib.dir), files(t, shim.dir))
			// A link goes to libtool, through the shim: a program from the
			// objects compiled, which runs.
			for _, tl := range []tool{lib, shim} {
				if out, err := tl.run(t, "--tag=CC", "--mode=link", "gcc", "-o", "prog", "sub/a.lo"); err != nil {
					t.Fatalf("link (shim %v): %v\n%s", tl.shim, err, out)
				}
				if err := exec.Command(filepath.Join(tl.dir, "prog")).Run(); err != nil {
					t.Errorf("prog (shim %v): %v", tl.shim, err)
				}
			}
		})
	}
}

// A libtool the shim does not reproduce is left to do the compiles.
func TestReadLibtool(t *testing.T) {
	good := "#! /bin/bash\nPROGRAM=ltmain.sh\nPACKAGE=libtool\nVERSION=1.5.26\nTIMESTAMP=\" (1.1220.2.492 2008/01/30 06:40:56)\"\n" +
		"host_os=linux-gnu\nbuild_libtool_libs=yes\nbuild_old_libs=yes\nobjdir=.libs\nobjext=\"o\"\npic_flag=\" -fPIC -DPIC\"\npic_mode=default\n" +
		"compiler_c_o=\"yes\"\nneed_locks=\"no\"\nfix_srcfile_path=\"\"\n" +
		"# ### BEGIN LIBTOOL TAG CONFIG: disable-static\nbuild_old_libs=no\n# ### END LIBTOOL TAG CONFIG: disable-static\n"
	for _, tt := range []struct {
		name, libtool string
		ok            bool
		want          libtoolConfig
	}{
		{"PHP's, on Linux", good, true, libtoolConfig{shared: true, static: true, picFlag: "-fPIC -DPIC", picMode: "default",
			generatedBy: "ltmain.sh - GNU libtool 1.5.26 (1.1220.2.492 2008/01/30 06:40:56)"}},
		{"static only", strings.Replace(good, "build_libtool_libs=yes", "build_libtool_libs=no", 1), true,
			libtoolConfig{static: true, picFlag: "-fPIC -DPIC", picMode: "default", generatedBy: "ltmain.sh - GNU libtool 1.5.26 (1.1220.2.492 2008/01/30 06:40:56)"}},
		{"--with-pic", strings.Replace(good, "pic_mode=default", "pic_mode=yes", 1), true, libtoolConfig{shared: true, static: true,
			picFlag: "-fPIC -DPIC", picMode: "yes", generatedBy: "ltmain.sh - GNU libtool 1.5.26 (1.1220.2.492 2008/01/30 06:40:56)"}},
		{"a pic_mode libtool 1.5 has not", strings.Replace(good, "pic_mode=default", "pic_mode=maybe", 1), false, libtoolConfig{}},
		{"another version", strings.Replace(good, "VERSION=1.5.26", "VERSION=2.4.7", 1), false, libtoolConfig{}},
		{"locks", strings.Replace(good, `need_locks="no"`, `need_locks="yes"`, 1), false, libtoolConfig{}},
		{"no -c -o", strings.Replace(good, `compiler_c_o="yes"`, `compiler_c_o="no"`, 1), false, libtoolConfig{}},
		{"a quote in the PIC flags", strings.Replace(good, "-DPIC", "-DPIC'$(reboot)'", 1), false, libtoolConfig{}},
		{"a fixed source path", strings.Replace(good, `fix_srcfile_path=""`, `fix_srcfile_path="x"`, 1), false, libtoolConfig{}},
		{"not yes or no", strings.Replace(good, "build_old_libs=yes", "build_old_libs=maybe", 1), false, libtoolConfig{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tree := t.TempDir()
			if err := os.WriteFile(filepath.Join(tree, "libtool"), []byte(tt.libtool), 0o755); err != nil {
				t.Fatal(err)
			}
			c, ok, err := readLibtool(tree)
			if err != nil || ok != tt.ok || (ok && c != tt.want) {
				t.Errorf("readLibtool = %+v, %v, %v; want %+v, %v", c, ok, err, tt.want, tt.ok)
			}
		})
	}
	c, ok, err := readLibtool(t.TempDir())
	if ok || err != nil {
		t.Errorf("a tree without libtool: %+v, %v, %v; want no shim and no error", c, ok, err)
	}
}

// What configure wrote may be hostile: a link where the shim goes is
// replaced, not written through, and a Makefile whose LIBTOOL is not PHP's
// line gets no shim.
func TestInstallShimUntrustedTree(t *testing.T) {
	libtool := "PROGRAM=ltmain.sh\nPACKAGE=libtool\nVERSION=1.5.26\nhost_os=linux-gnu\nbuild_libtool_libs=no\nbuild_old_libs=yes\n" +
		"objdir=.libs\nobjext=\"o\"\npic_flag=\" -fPIC -DPIC\"\npic_mode=default\ncompiler_c_o=\"yes\"\nneed_locks=\"no\"\nfix_srcfile_path=\"\"\n"
	tree := t.TempDir()
	outside := filepath.Join(t.TempDir(), "bashrc")
	for name, text := range map[string]string{"libtool": libtool, "Makefile": "LIBTOOL = " + makeLibtool + "\n"} {
		if err := os.WriteFile(filepath.Join(tree, name), []byte("x\n"+text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(outside, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(tree, shimName)); err != nil {
		t.Fatal(err)
	}
	arg, err := installShim(tree)
	if err != nil || arg == "" {
		t.Fatalf("installShim: %q, %v", arg, err)
	}
	if data, _ := os.ReadFile(outside); string(data) != "mine\n" {
		t.Errorf("the file the link named was written: %q", data)
	}
	if fi, err := os.Lstat(filepath.Join(tree, shimName)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the shim is not a regular file: %v, %v", fi, err)
	}
	if err := os.WriteFile(filepath.Join(tree, "Makefile"), []byte("LIBTOOL = $(SHELL) $(top_builddir)/libtool --silent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if arg, err := installShim(tree); arg != "" || err != nil {
		t.Errorf("a Makefile with another LIBTOOL: %q, %v; want no shim", arg, err)
	}
}
