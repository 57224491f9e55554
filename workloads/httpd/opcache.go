package httpd

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// opcacheINI is how production runs OPcache, and so how every server
// here does where the build has it: on, the scripts compiled once and
// never checked for changes again (a docroot is written before its server
// starts and never after), 128 MB of shared memory (PHP's default), the
// JIT off (PHP 8.2's default; it is a compiler of its own, not what a
// change to mysqlnd is about). Without it PHP compiles the script on
// every request, and that work, nothing to do with mysqlnd, dilutes the
// per-request cost being measured.
var opcacheINI = map[string]string{
	"opcache.enable":                  "1",
	"opcache.enable_cli":              "0",
	"opcache.memory_consumption":      "128",
	"opcache.interned_strings_buffer": "8",
	"opcache.max_accelerated_files":   "10000",
	"opcache.validate_timestamps":     "0",
	"opcache.jit_buffer_size":         "0",
	// A script changed in the last 2 seconds (the default) is compiled
	// on every request and not cached: a docroot written just before its
	// server started would be cached or not by the clock, and a window of
	// requests would count its compiles or not.
	"opcache.file_update_protection": "0",
}

// OPcacheSettings are the settings a server with OPcache runs it with, as
// the benchmark's settings state them.
func OPcacheSettings() string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(opcacheINI)) {
		kv = append(kv, k+"="+opcacheINI[k])
	}
	return strings.Join(kv, ", ")
}

// OPcacheModule is the OPcache extension of the build whose Apache module
// is module (the build's libs/libphp.so): modules/opcache.so beside libs/,
// which a build configured with OPcache has; "" where it has none. PHP's
// --disable-all leaves OPcache out unless --enable-opcache puts it back.
// The build is the tree under test's: the directory and the file must be
// what they say, not links to elsewhere (a container binds the
// directory).
func OPcacheModule(module string) string {
	dir := filepath.Join(filepath.Dir(filepath.Dir(module)), "modules")
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	so := filepath.Join(dir, "opcache.so")
	if fi, err := os.Lstat(so); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return so
}

// A Named module is the Apache module of one build, by the name a report
// gives the build (base, head).
type Named struct{ Name, Module string }

// OPcacheState is how a report states OPcache for servers of the builds
// ms, each loading its build's OPcache where it has one (OPcacheModule):
// "on: SETTINGS" when every build has it, "off: why" when none has, and
// "on for X only: Y's build has none" otherwise; with and without name
// the builds that have it and those that have none, for a caller to judge
// what a comparison of their servers is worth.
func OPcacheState(ms ...Named) (state string, with, without []string) {
	for _, m := range ms {
		if OPcacheModule(m.Module) != "" {
			with = append(with, m.Name)
		} else {
			without = append(without, m.Name)
		}
	}
	switch {
	case len(without) == 0:
		return "on: " + OPcacheSettings(), with, without
	case len(with) == 0:
		return "off: the builds have no OPcache (no modules/opcache.so: PHP's --disable-all leaves it out unless --enable-opcache puts it back), so PHP compiles the script on every request", with, without
	}
	return fmt.Sprintf("on for %s only: %s's build has none", strings.Join(with, ", "), strings.Join(without, ", ")), with, without
}

// opcacheLines are php.ini's lines that load the extension so with the
// production settings, its lock file in dir (the server's run dir, which
// a container binds writable: /tmp may not be).
func opcacheLines(so, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "zend_extension = \"%s\"\n", so)
	for _, k := range slices.Sorted(maps.Keys(opcacheINI)) {
		fmt.Fprintf(&b, "%s = %s\n", k, opcacheINI[k])
	}
	fmt.Fprintf(&b, "opcache.lockfile_path = \"%s\"\n", dir)
	return b.String()
}
