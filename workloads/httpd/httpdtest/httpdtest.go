// Package httpdtest makes what the tests of httpd's users need: the
// layout of a PHP build as httpd reads it, without compiling PHP.
package httpdtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Build lays out an empty PHP build in a temporary directory, with
// modules/opcache.so beside libs/ where opcache is true, and returns its
// Apache module's path (libs/libphp.so): what httpd.OPcacheModule reads.
func Build(t testing.TB, opcache bool) string {
	t.Helper()
	dir := t.TempDir()
	module := filepath.Join(dir, "libs", "libphp.so")
	files := []string{module}
	if opcache {
		files = append(files, filepath.Join(dir, "modules", "opcache.so"))
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return module
}
