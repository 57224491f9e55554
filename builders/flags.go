package builders

import (
	"fmt"
	"slices"
	"strings"
)

// The official image's compiler flags (docker-library/php), exported as
// CFLAGS, CPPFLAGS and LDFLAGS before configure.
const (
	OfficialCFLAGS   = "-fstack-protector-strong -fpic -fpie -O2 -D_LARGEFILE_SOURCE -D_FILE_OFFSET_BITS=64"
	OfficialCPPFLAGS = OfficialCFLAGS
	OfficialLDFLAGS  = "-Wl,-O1 -pie"
)

// Variant is a thread-safety variant of PHP.
type Variant string

const (
	NTS Variant = "nts"
	ZTS Variant = "zts"
	// TSan is ZTS built with ThreadSanitizer (-fsanitize=thread, with debug
	// information so that its reports name files and lines). It is only for
	// the concurrency check: its machine code and speed are not PHP's.
	TSan Variant = "tsan"
	// DebugZTS is ZTS configured --enable-debug, as php-src CI's
	// LINUX_X64_DEBUG_ZTS job builds it: ZEND_ASSERT checks, and Zend's
	// allocator reporting the memory a request leaked, which turns the
	// test that leaked into a failure. It is for the suites: it has no
	// Apache module, and its machine code (-O0) is not PHP's.
	DebugZTS Variant = "debug-zts"
	// DebugZTSASan is DebugZTS built with AddressSanitizer, as php-src
	// CI's ASAN job: run-tests --asan then reports what LeakSanitizer
	// finds as LEAK, and a bad access fails the test that made it.
	DebugZTSASan Variant = "debug-zts-asan"
)

// ParseVariant reads a variant a run may be asked to build: nts, zts,
// debug-zts or debug-zts-asan. TSan builds are the concurrency check's to
// ask for, never a user's.
func ParseVariant(s string) (Variant, error) {
	switch v := Variant(s); v {
	case NTS, ZTS, DebugZTS, DebugZTSASan:
		return v, nil
	}
	return "", fmt.Errorf("unknown variant %q (nts, zts, debug-zts, debug-zts-asan)", s)
}

// Threaded reports whether v is a thread-safe (ZTS) build.
func (v Variant) Threaded() bool { return v != NTS }

// Debug reports whether v is configured --enable-debug.
func (v Variant) Debug() bool { return v == DebugZTS || v == DebugZTSASan }

// Serves reports whether v's build has the Apache module, which the
// concurrency check and the benchmark load.
func (v Variant) Serves() bool { return v == ZTS || v == TSan }

// VersionMark is what `php -v` of a build of v says in parentheses.
func (v Variant) VersionMark() string {
	switch v {
	case NTS:
		return "(NTS)"
	case DebugZTS, DebugZTSASan:
		return "(ZTS DEBUG)"
	}
	return "(ZTS)"
}

// TSanFlags are added to CFLAGS, CPPFLAGS and LDFLAGS of a TSan build.
const TSanFlags = "-fsanitize=thread -g"

// ASanFlags are added to CFLAGS and CPPFLAGS of an AddressSanitizer
// build, and its -fsanitize to LDFLAGS: ZEND_TRACK_ARENA_ALLOC makes
// Zend's arenas allocate each block with malloc, where ASan sees it.
const ASanFlags = "-fsanitize=address -fno-omit-frame-pointer -DZEND_TRACK_ARENA_ALLOC"

// Profile is a set of configure options.
type Profile string

const (
	// ProfileMySQL builds what the checks need, the way distributions
	// build mysqlnd: the CLI, mysqlnd, mysqli, PDO and pdo_mysql with
	// OpenSSL and zlib, plus for ZTS on a host the Apache module the
	// benchmark loads. Without --with-openssl mysqlnd's MYSQLND_HAVE_SSL
	// code (TLS in mysqlnd_vio.c, RSA password exchange in
	// mysqlnd_auth.c) is compiled out, and neither the machine code diff
	// nor the suites would see it.
	ProfileMySQL Profile = "mysql"
	// ProfileOfficial is docker-library's configure line plus mysqli and
	// pdo_mysql, for fidelity runs. It needs the image's -dev packages.
	ProfileOfficial Profile = "official"
)

// Describe says in a few words what a profile configures, for the
// report's settings.
func (p Profile) Describe() string {
	switch p {
	case ProfileMySQL:
		return "mysqlnd, mysqli, pdo_mysql with OpenSSL and zlib, and OPcache beside the Apache module; nothing else"
	case ProfileOfficial:
		return "docker-library's configure line plus mysqli and pdo_mysql"
	}
	return ""
}

// ParseProfile reads a profile's name: mysql or official.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case ProfileMySQL, ProfileOfficial:
		return p, nil
	}
	return "", fmt.Errorf("unknown profile %q (mysql, official)", s)
}

// Env returns the compiler flags of a variant as environment assignments:
// the official image's, plus ThreadSanitizer's for TSan and
// AddressSanitizer's for debug-zts-asan.
func Env(v Variant) []string {
	cflags, cppflags, ldflags := OfficialCFLAGS, OfficialCPPFLAGS, OfficialLDFLAGS
	switch v {
	case TSan:
		cflags += " " + TSanFlags
		cppflags += " " + TSanFlags
		ldflags += " " + TSanFlags
	case DebugZTSASan:
		cflags += " " + ASanFlags
		cppflags += " " + ASanFlags
		ldflags += " -fsanitize=address"
	}
	env := []string{"CFLAGS=" + cflags, "CPPFLAGS=" + cppflags, "LDFLAGS=" + ldflags}
	if v == TSan || v == DebugZTSASan {
		// PHP picks SIMD string functions through ifunc resolvers, which the
		// dynamic loader runs while relocating, before the sanitizer's
		// runtime is initialised: instrumented, they crash php at start-up.
		// Without them PHP calls the same functions through a pointer.
		env = append(env, "ax_cv_have_func_attribute_ifunc=no")
	}
	return env
}

// ConfigureArgs returns configure's arguments for a profile and variant.
// apxs is the path of apxs2 for a ZTS build with the Apache module ("" for
// none: PHP builds one shared SAPI at a time, and --with-apxs2 excludes
// --enable-embed).
func ConfigureArgs(p Profile, v Variant, apxs string) ([]string, error) {
	var args []string
	switch p {
	case ProfileMySQL:
		args = []string{
			"--disable-all", "--enable-mysqlnd", "--with-mysqli", "--enable-pdo", "--with-pdo-mysql",
			"--with-openssl", "--with-zlib", "--disable-cgi", "--disable-phpdbg",
		}
	case ProfileOfficial:
		// docker-library/php 8.x (bookworm) configure line.
		args = []string{
			"--with-config-file-path=/usr/local/etc/php", "--with-config-file-scan-dir=/usr/local/etc/php/conf.d",
			"--enable-option-checking=fatal", "--with-mhash", "--with-pic", "--enable-ftp", "--enable-mbstring",
			"--enable-mysqlnd", "--with-password-argon2", "--with-sodium=shared", "--with-pdo-sqlite=/usr",
			"--with-sqlite3=/usr", "--with-curl", "--with-iconv", "--with-openssl", "--with-readline", "--with-zlib",
			"--disable-phpdbg", "--with-pear", "--with-libdir=lib/x86_64-linux-gnu", "--disable-cgi",
			"--with-mysqli", "--with-pdo-mysql",
		}
		if apxs == "" {
			args = append(args, "--enable-embed")
		}
	default:
		return nil, fmt.Errorf("unknown profile %q", p)
	}
	// The official images have no valgrind headers; configure would pick up
	// the host's and change Zend's allocator code.
	args = append(args, "--without-valgrind")
	switch v {
	case NTS:
	case ZTS, TSan:
		args = append(args, "--enable-zts", "--disable-zend-signals")
		if apxs != "" {
			args = append(args, "--with-apxs2="+apxs)
			// With the Apache module libtool compiles every file twice, PIC
			// for the module and not for php; --with-pic (the official
			// image's own option) makes the second compile the first's
			// command, which ccache answers, and leaves the module's code
			// as it was. Only php, which runs the suites, is PIC too.
			if !slices.Contains(args, "--with-pic") {
				args = append(args, "--with-pic")
			}
			if p == ProfileMySQL {
				// The servers run PHP as production does, with OPcache
				// (workloads/httpd loads it): without it PHP compiles the
				// script on every request, work that dilutes the cost being
				// measured. Its JIT is off there, so it is not built.
				args = append(args, "--enable-opcache", "--disable-opcache-jit")
			}
		}
	case DebugZTS, DebugZTSASan:
		// configure --enable-debug replaces CFLAGS' -O2 with -O0 itself.
		args = append(args, "--enable-debug", "--enable-zts", "--disable-zend-signals")
	default:
		return nil, fmt.Errorf("unknown variant %q", v)
	}
	return args, nil
}

// ConfigureLine renders configure's command line as a person would type it.
func ConfigureLine(v Variant, args []string) string {
	var words []string
	for _, e := range Env(v) {
		k, v, _ := strings.Cut(e, "=")
		words = append(words, k+"='"+v+"'")
	}
	return strings.Join(append(append(words, "./configure"), args...), " ")
}
