package abi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInstallHeaders(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string
	}{
		{"directories", "PHP_INSTALL_HEADERS([Zend/ TSRM/ include/ main/ main/streams/])", []string{"Zend/", "TSRM/", "include/", "main/", "main/streams/"}},
		{"a directory of an extension", "if test \"$PHP_MYSQLND\" != \"no\"; then\n  PHP_INSTALL_HEADERS([ext/mysqlnd/])\nfi", []string{"ext/mysqlnd/"}},
		{"files joined to their path", "PHP_INSTALL_HEADERS([ext/date], [php_date.h lib/timelib.h])", []string{"ext/date/php_date.h", "ext/date/lib/timelib.h"}},
		{"a directory in a file list", "PHP_INSTALL_HEADERS([ext/sockets/], [php_sockets.h pcre2lib/])", []string{"ext/sockets/php_sockets.h", "ext/sockets/pcre2lib/"}},
		{"unquoted, over lines", "PHP_INSTALL_HEADERS([Zend/Optimizer], [ \\\n    zend_cfg.h \\\n    zend_ssa.h])", []string{"Zend/Optimizer/zend_cfg.h", "Zend/Optimizer/zend_ssa.h"}},
		{"shell variables left out", "PHP_INSTALL_HEADERS(ext/hash, $EXT_HASH_HEADERS)\nPHP_INSTALL_HEADERS([$GD_HEADER_DIRS])", nil},
		{"the macro's documentation", "dnl PHP_INSTALL_HEADERS(path [, file ...])\nAC_DEFUN([PHP_INSTALL_HEADERS],[\n  ifelse([$2],[],[", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, installHeaders(tt.script)); diff != "" {
				t.Errorf("installHeaders (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInstalledHas(t *testing.T) {
	in := Installed{Files: map[string]bool{"ext/date/php_date.h": true}, Dirs: map[string]bool{"ext/mysqlnd": true}}
	tests := []struct {
		path string
		want bool
	}{
		{"ext/mysqlnd/mysqlnd_structs.h", true},
		{"ext/mysqlnd/mysqlnd.c", false},
		{"ext/mysqlnd/sub/x.h", false}, // the rule copies a directory's own *.h
		{"ext/date/php_date.h", true},
		{"ext/date/php_date_private.h", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := in.Has(tt.path); got != tt.want {
				t.Errorf("Has(%q) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

func TestInstalledPath(t *testing.T) {
	in := Installed{Dirs: map[string]bool{"main": true, "ext/mysqlnd": true, "include": true}}
	src := t.TempDir()
	for _, f := range []string{"main/php.h", "ext/mysqlnd/mysqlnd_structs.h"} {
		p := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, path string
		want       string
	}{
		{"under a root", src + "/ext/mysqlnd/mysqlnd_structs.h", "ext/mysqlnd/mysqlnd_structs.h"},
		{"under a root, not installed", src + "/ext/mysqlnd/mysqlnd_priv.c", ""},
		{"compiled elsewhere", "/build/php-8.4.tmp-1/main/php.h", "main/php.h"},
		{"compiled elsewhere, in no root", "/build/php-8.4.tmp-1/main/php_gone.h", ""},
		{"a system header", "/usr/include/stdio.h", ""},
		// include/ is installed, and gcc's own headers lie in an include/.
		{"a compiler header", "/usr/lib/gcc/x86_64-linux-gnu/12/include/stdatomic.h", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := installedPath(tt.path, in, []string{src}); got != tt.want {
				t.Errorf("installedPath(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{"", Fail, false}, {"fail", Fail, false}, {"warn", Warn, false}, {"off", Off, false}, {"information", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMode(tt.in)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("ParseMode(%q) = %q, %v", tt.in, got, err)
			}
		})
	}
}

func TestStable(t *testing.T) {
	for branch, want := range map[string]bool{"PHP-8.4": true, "refs/heads/PHP-8.5": true, "master": false, "PHP-8.4.1": false, "PHP-8": false, "feature/PHP-8.4": false} {
		t.Run(branch, func(t *testing.T) {
			if got := Stable(branch); got != want {
				t.Errorf("Stable(%q) = %v, want %v", branch, got, want)
			}
		})
	}
}
