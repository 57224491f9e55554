package builders

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/proc"
)

// fakeTree writes a source tree shaped like a release tarball whose
// configure and Makefile are tiny: make compiles main.c with the real gcc
// (into main.o and, as php-src's would be, ext/mysqlnd/mysqlnd.o) and
// writes a sapi/cli/php script that answers -v and -m like PHP. Every
// configure run appends to COUNT, so a test can tell whether a build ran.
func fakeTree(t *testing.T, mainC string) string {
	t.Helper()
	return writeTree(t, map[string]string{
		"configure": fakeConfigure,
		"Makefile": `include Makefile.vars
all: main.lo
` + fakePHPRecipe + `	if [ $(TS) = ZTS ]; then mkdir -p libs && cp main.o libs/libphp.so; fi
	mkdir -p ext/mysqlnd && cp main.o ext/mysqlnd/mysqlnd.o
main.lo: main.c
	$(CC) -c $(CFLAGS) main.c -o main.o
	touch main.lo
`,
		"main.c":                    mainC,
		"ext/mysqli/tests/001.phpt": "--TEST--\nfake\n--FILE--\n<?php echo 1;\n--EXPECT--\n1\n",
	})
}

// fakeConfigure is a fake tree's configure: it records its arguments,
// counts its runs in the file $COUNT named when the tree was written (a
// build gets nothing of the test's environment), and tells make the build's thread safety.
const fakeConfigure = `#!/bin/sh
echo "$@" > configure.args
echo configured >> COUNT
ts=NTS
case "$*" in *--enable-zts*) ts=ZTS;; esac
echo "TS=$ts" > Makefile.vars
`

// fakePHPRecipe is the recipe lines that write a fake tree's php: a script
// that answers -v and -m like PHP.
const fakePHPRecipe = `	mkdir -p sapi/cli
	printf '#!/bin/sh\ncase "$$2" in -v) echo "PHP 8.2.99 (cli) ($(TS))";; -m) printf "[PHP Modules]\\nCore\\nmysqli\\nmysqlnd\\nPDO\\npdo_mysql\\n";; esac\n' > sapi/cli/php
	chmod +x sapi/cli/php
`

// writeTree writes files (by slash-separated path) into a new directory;
// configure and any file ending in "cc" are executable.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		mode := os.FileMode(0o644)
		if name == "configure" || strings.HasSuffix(name, "cc") {
			mode = 0o755
		}
		if name == "configure" {
			body = strings.Replace(body, ">> COUNT", ">> '"+os.Getenv("COUNT")+"'", 1)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func count(t *testing.T, file string) int {
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "configured")
}

func TestBuildAndCache(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	counter := filepath.Join(t.TempDir(), "count")
	t.Setenv("COUNT", counter)
	cache := cacheDir(t)
	b := &Builder{Exec: &Host{}, CacheDir: cache}
	src := fakeTree(t, "int main(void) { return 0; }\n")
	ctx := context.Background()

	for _, v := range []Variant{NTS, ZTS} {
		var totals []int
		spec := Spec{Label: "base/" + string(v), Source: src, TreeHash: "tree1", Variant: v, Profile: ProfileMySQL, Jobs: 1,
			Objects: func(n int) { totals = append(totals, n) }}
		first, err := b.Build(ctx, spec)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		// The fake Makefile compiles one object, main.lo.
		if d := cmp.Diff([]int{1}, totals); d != "" {
			t.Errorf("%s: Objects calls (-want +got):\n%s", v, d)
		}
		want := "(" + strings.ToUpper(string(v)) + ")"
		if !first.OK || first.Cached || !strings.Contains(first.PHPVersion, want) {
			t.Errorf("%s: first build = ok %v cached %v version %q", v, first.OK, first.Cached, first.PHPVersion)
		}
		args, _ := os.ReadFile(filepath.Join(first.Dir, "configure.args"))
		if v == ZTS && !strings.Contains(string(args), "--enable-zts --disable-zend-signals") {
			t.Errorf("zts configure args = %q", args)
		}
		// Same tree, variant and flags: nothing is built again.
		again, err := b.Build(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Cached || again.Dir != first.Dir || again.Key != first.Key {
			t.Errorf("%s: re-run = cached %v dir %s, want the cached %s", v, again.Cached, again.Dir, first.Dir)
		}
		if len(totals) != 1 {
			t.Errorf("%s: a cached build called Objects", v)
		}
	}
	if n := count(t, counter); n != 2 {
		t.Errorf("configure ran %d times, want 2 (once per variant)", n)
	}
	// The source tree is never written.
	if _, err := os.Stat(filepath.Join(src, "main.o")); !os.IsNotExist(err) {
		t.Error("the build wrote into its source tree")
	}
	// Only finished entries and their locks are in the cache.
	entries, _ := filepath.Glob(filepath.Join(cache, "builds", "*.tmp-*"))
	if len(entries) > 0 {
		t.Errorf("temporary build dirs left: %v", entries)
	}
}

func TestBuildCompileError(t *testing.T) {
	t.Setenv("COUNT", filepath.Join(t.TempDir(), "count"))
	b := &Builder{Exec: &Host{}, CacheDir: t.TempDir()}
	src := fakeTree(t, "int main(void) {\n\treturn 0\n}\n")
	var log bytes.Buffer
	res, err := b.Build(context.Background(), Spec{Label: "head/nts", Source: src, TreeHash: "broken", Variant: NTS, Profile: ProfileMySQL, Log: &log})
	if !errors.Is(err, ErrBuildFailed) {
		t.Fatalf("Build = %v, want ErrBuildFailed", err)
	}
	if res == nil || res.OK {
		t.Fatalf("result = %+v, want a failed build", res)
	}
	want := []CompileError{{File: "main.c", Line: 2, Column: 17, Message: "expected ';' before '}' token"}}
	if d := cmp.Diff(want, res.Errors); d != "" {
		t.Errorf("compile errors (-want +got):\n%s\nlog:\n%s", d, log.String())
	}
	if !strings.Contains(res.Failure, "make") {
		t.Errorf("failure = %q, want the make step named", res.Failure)
	}
	// A failed build is not cached.
	if _, err := os.Stat(filepath.Join(b.CacheDir, "builds", res.Key)); !os.IsNotExist(err) {
		t.Error("a failed build was cached")
	}
}

func TestHostExec(t *testing.T) {
	h := &Host{}
	ctx := context.Background()
	var out bytes.Buffer
	runErr, execErr := h.Exec(ctx, Cmd{Args: []string{"sh", "-c", "echo hi; exit 3"}, Output: &out})
	var ee *proc.ExitError
	if execErr != nil || !errors.As(runErr, &ee) || ee.Code != 3 || out.String() != "hi\n" {
		t.Errorf("exit 3: runErr %v execErr %v out %q", runErr, execErr, out.String())
	}
	runErr, execErr = h.Exec(ctx, Cmd{Args: []string{"/nonexistent/program"}})
	if runErr != nil || execErr == nil {
		t.Errorf("missing program: runErr %v execErr %v, want only execErr", runErr, execErr)
	}

	// Cancelling kills the whole process tree, not only the leader.
	pidFile := filepath.Join(t.TempDir(), "pid")
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		h.Exec(cctx, Cmd{Args: []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile + "; wait"}})
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(pidFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	pid, _ := os.ReadFile(pidFile)
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat("/proc/" + strings.TrimSpace(string(pid))); err == nil {
		stat, _ := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
		if !strings.Contains(string(stat), ") Z ") {
			t.Errorf("the grandchild sleep (pid %s) survived cancellation", pid)
		}
	}
}

func TestConfigureArgs(t *testing.T) {
	nts, _ := ConfigureArgs(ProfileMySQL, NTS, "")
	zts, _ := ConfigureArgs(ProfileMySQL, ZTS, "/usr/bin/apxs2")
	want := "--disable-all --enable-mysqlnd --with-mysqli --enable-pdo --with-pdo-mysql --with-openssl --with-zlib --disable-cgi --disable-phpdbg --without-valgrind"
	if got := strings.Join(nts, " "); got != want {
		t.Errorf("mysql/nts = %q, want %q", got, want)
	}
	if got := strings.Join(zts, " "); got != want+" --enable-zts --disable-zend-signals --with-apxs2=/usr/bin/apxs2 --with-pic --enable-opcache --disable-opcache-jit" {
		t.Errorf("mysql/zts = %q", got)
	}
	off, _ := ConfigureArgs(ProfileOfficial, ZTS, "")
	if s := strings.Join(off, " "); !strings.Contains(s, "--enable-embed") || !strings.Contains(s, "--with-pdo-mysql") {
		t.Errorf("official/zts = %q, want --enable-embed and pdo_mysql", s)
	}
	if _, err := ConfigureArgs("nope", NTS, ""); err == nil {
		t.Error("unknown profile accepted")
	}
	tsan, _ := ConfigureArgs(ProfileMySQL, TSan, "/usr/bin/apxs2")
	if diff := cmp.Diff(zts, tsan); diff != "" {
		t.Errorf("mysql/tsan configure arguments differ from mysql/zts (-zts +tsan):\n%s", diff)
	}
	if got, want := strings.Join(Env(TSan), " "), "CFLAGS="+OfficialCFLAGS+" -fsanitize=thread -g"; !strings.HasPrefix(got, want) || !strings.Contains(got, "LDFLAGS="+OfficialLDFLAGS+" -fsanitize=thread -g ax_cv_have_func_attribute_ifunc=no") {
		t.Errorf("Env(TSan) = %q, want the official flags plus -fsanitize=thread -g", got)
	}
	// The debug ZTS build is php-src CI's: debug and ZTS, no Apache module
	// however apxs2 is at hand.
	debug, _ := ConfigureArgs(ProfileMySQL, DebugZTS, "/usr/bin/apxs2")
	if got := strings.Join(debug, " "); got != want+" --enable-debug --enable-zts --disable-zend-signals" {
		t.Errorf("mysql/debug-zts = %q", got)
	}
	if b := (&Builder{Apxs: "/usr/bin/apxs2"}); b.apxsFor(DebugZTS) != "" || b.apxsFor(ZTS) == "" || b.apxsFor(TSan) == "" {
		t.Error("the Apache module is built for ZTS and TSan only")
	}
	if got, want := Env(ZTS), Env(NTS); !cmp.Equal(got, want) {
		t.Errorf("Env(ZTS) = %q, want the official flags %q", got, want)
	}
	line := ConfigureLine(NTS, nts)
	if !strings.HasPrefix(line, "CFLAGS='-fstack-protector-strong -fpic -fpie -O2 -D_LARGEFILE_SOURCE -D_FILE_OFFSET_BITS=64' CPPFLAGS='") {
		t.Errorf("configure line = %q", line)
	}
}

// TestBuildLockWaitHonoursContext: a build whose cache entry another run is
// building says whom it waits for and gives up when its context ends,
// instead of waiting silently through SIGINT.
func TestBuildLockWaitHonoursContext(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	t.Setenv("COUNT", filepath.Join(t.TempDir(), "count"))
	cache := cacheDir(t)
	b := &Builder{Exec: &Host{}, CacheDir: cache}
	var log bytes.Buffer
	spec := Spec{Label: "base/nts", Source: fakeTree(t, "int main(void) { return 0; }\n"), TreeHash: "tree1", Variant: NTS, Profile: ProfileMySQL, Jobs: 1, Log: &log}
	key, _, err := b.Key(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := cachedir.Lock(filepath.Join(cache, "builds", key) + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := b.Build(ctx, spec); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Build while its entry is locked = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Build returned %v after its context ended", d)
	}
	if want := fmt.Sprintf("held by pid %d since ", os.Getpid()); !strings.Contains(log.String(), want) {
		t.Errorf("build log %q does not say %q", log.String(), want)
	}
}

// TestBuildRemovesKilledBuildsDirs: any build removes the temporary dirs
// of dead builds, of its own key and of others: one whose key's lock no one
// holds (its writer is gone), even where the killed build made its dirs
// unwritable. A dir whose key is being built, and anything not named like a
// build's dir, are left alone.
func TestBuildRemovesKilledBuildsDirs(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	t.Setenv("COUNT", filepath.Join(t.TempDir(), "count"))
	cache := cacheDir(t)
	builds := filepath.Join(cache, "builds")
	b := &Builder{Exec: &Host{}, CacheDir: cache}
	spec := Spec{Label: "base/nts", Source: fakeTree(t, "int main(void) { return 0; }\n"), TreeHash: "tree1", Variant: NTS, Profile: ProfileMySQL, Jobs: 1}
	key, _, err := b.Key(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	const dead, live, locked = "0123456789abcdef01234567", "89abcdef0123456789abcdef", "fedcba9876543210fedcba98"
	// A build of live is under way: this test holds its lock, as another
	// process would. locked's lock file was left by a dead holder: the
	// kernel dropped its flock.
	unlock, err := cachedir.Lock(filepath.Join(builds, live+".lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := os.WriteFile(filepath.Join(builds, locked+".lock"), []byte("4242 2024-01-01T00:00:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	leftovers := []struct {
		dir      string
		readOnly bool // the killed build left it unwritable
		removed  bool
	}{
		{dir: key + ".tmp-123", removed: true},
		{dir: dead + ".tmp-456", removed: true},
		{dir: dead + ".tmp-789", readOnly: true, removed: true},
		{dir: locked + ".tmp-1", removed: true},
		{dir: live + ".tmp-2", removed: false},
		{dir: "notakey.tmp-3", removed: false},
		{dir: dead + ".tmp-x", removed: false},
	}
	for _, tt := range leftovers {
		sub := filepath.Join(builds, tt.dir, "sub")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "main.o"), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		if tt.readOnly {
			if err := makeReadOnly(filepath.Join(builds, tt.dir)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var log bytes.Buffer
	spec.Log = &log
	if _, err := b.Build(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	for _, tt := range leftovers {
		t.Run(tt.dir, func(t *testing.T) {
			_, err := os.Stat(filepath.Join(builds, tt.dir))
			if gone := os.IsNotExist(err); gone != tt.removed {
				t.Errorf("removed %v (%v), want %v; log:\n%s", gone, err, tt.removed, log.String())
			}
		})
	}
}
