package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/cachedir"
)

// writeEntry writes a finished build's entry, as far as `patchproof cache`
// reads one: its record and a file of size bytes, last used at used.
func writeEntry(t *testing.T, cache, key, label string, size int, used time.Time) {
	t.Helper()
	dir := filepath.Join(cache, "builds", key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	record := `{"label": "` + label + `", "side": "base", "variant": "nts", "ok": true}`
	if err := os.WriteFile(filepath.Join(dir, "patchproof-build.json"), []byte(record), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "php"), bytes.Repeat([]byte("x"), size-len(record)), 0o555); err != nil {
		t.Fatal(err)
	}
	used = used.Truncate(time.Second)
	if err := os.WriteFile(filepath.Join(cache, "builds", key+".used"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(cache, "builds", key+".used"), used, used); err != nil {
		t.Fatal(err)
	}
}

func TestCacheCmd(t *testing.T) {
	const old, held, recent = "aaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbb", "cccccccccccccccccccccccc"
	newCache := func(t *testing.T) string {
		cache := t.TempDir()
		now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		writeEntry(t, cache, old, "PHP-8.2 base/nts", 2048, now.Add(-2*time.Hour))
		writeEntry(t, cache, held, "PHP-8.2 base/zts", 1024, now.Add(-3*time.Hour))
		writeEntry(t, cache, recent, "PHP-8.2 head/nts", 1024, now.Add(-time.Hour))
		// Another run is building or verifying held.
		unlock, ok, err := cachedir.TryLock(filepath.Join(cache, "builds", held+".lock"))
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		t.Cleanup(unlock)
		return cache
	}
	exists := func(cache, key string) bool {
		_, err := os.Lstat(filepath.Join(cache, "builds", key))
		return !errors.Is(err, fs.ErrNotExist)
	}

	for _, tt := range []struct {
		name    string
		args    []string // after --cache DIR
		code    int
		want    []string // lines of stdout, in order
		stderr  string
		kept    []string
		gone    []string
		noCache bool // run on an empty cache directory
	}{
		{name: "list", args: []string{"--cache-max", "50GiB"}, want: []string{
			"KEY                       LABEL             SIDE  VARIANT  SIZE     LAST USED             IN USE",
			held + "  PHP-8.2 base/zts  base  nts      1.0 KiB  2025-03-01T09:00:00Z  yes",
			old + "  PHP-8.2 base/nts  base  nts      2.0 KiB  2025-03-01T10:00:00Z  no",
			recent + "  PHP-8.2 head/nts  base  nts      1.0 KiB  2025-03-01T11:00:00Z  no",
			"3 builds, 4.0 KiB of a limit of 50.0 GiB",
		}, kept: []string{old, held, recent}},
		{name: "list an empty cache", args: []string{"--cache-max", "50GiB"}, noCache: true, want: []string{
			"KEY  LABEL  SIDE  VARIANT  SIZE  LAST USED  IN USE",
			"0 builds, 0 B of a limit of 50.0 GiB",
		}},
		{name: "prune dry run", args: []string{"prune", "--cache-max", "2KiB", "--dry-run"}, want: []string{
			"build cache over 2048 bytes: would remove build " + old + " (PHP-8.2 base/nts, 2048 bytes, last used 2025-03-01T10:00:00Z)",
			"would remove 1 builds, 2.0 KiB",
		}, kept: []string{old, held, recent}},
		{name: "prune spares a held lock", args: []string{"prune", "--cache-max", "1KiB"}, want: []string{
			"build cache over 1024 bytes: removed build " + old + " (PHP-8.2 base/nts, 2048 bytes, last used 2025-03-01T10:00:00Z)",
			"build cache over 1024 bytes: removed build " + recent + " (PHP-8.2 head/nts, 1024 bytes, last used 2025-03-01T11:00:00Z)",
			"removed 2 builds, 3.0 KiB",
		}, kept: []string{held}, gone: []string{old, recent}},
		{name: "prune under the limit", args: []string{"prune", "--cache-max", "4KiB"}, want: []string{
			"removed 0 builds, 0 B",
		}, kept: []string{old, held, recent}},
		{name: "bad size", args: []string{"prune", "--cache-max", "2XB"}, code: 2,
			stderr: "patchproof: --cache-max 2XB: want a number of bytes, or of KiB, MiB or GiB\n", kept: []string{old, held, recent}},
		{name: "negative size", args: []string{"prune", "--cache-max", "-1"}, code: 2,
			stderr: "patchproof: --cache-max -1: want a number of bytes, or of KiB, MiB or GiB\n", kept: []string{old, held, recent}},
		{name: "unexpected argument", args: []string{"purge"}, code: 2,
			stderr: "patchproof: cache: unexpected argument \"purge\" (see patchproof cache --help)\n", kept: []string{old, held, recent}},
		{name: "unknown flag", args: []string{"prune", "--max", "1"}, code: 2,
			stderr: "patchproof: cache prune: flag provided but not defined: --max (see patchproof cache --help)\n", kept: []string{old, held, recent}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			if !tt.noCache {
				cache = newCache(t)
			}
			args := append([]string{"cache", "--cache", cache}, tt.args...)
			if len(tt.args) > 0 && tt.args[0] == "prune" {
				args = append([]string{"cache", "prune", "--cache", cache}, tt.args[1:]...)
			}
			var stdout, stderr bytes.Buffer
			err := patchproof(context.Background(), &stdout, &stderr, args)
			stderr.Reset()
			if code := exitCode(&stderr, err); code != tt.code {
				t.Fatalf("exit %d (%v), want %d\n%s", code, err, tt.code, stdout.String())
			}
			if stderr.String() != tt.stderr {
				t.Errorf("stderr = %q, want %q", stderr.String(), tt.stderr)
			}
			got := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if tt.want == nil {
				got = nil
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("stdout (-want +got):\n%s", d)
			}
			for _, k := range tt.kept {
				if !exists(cache, k) {
					t.Errorf("%s removed, want it kept", k)
				}
			}
			for _, k := range tt.gone {
				if exists(cache, k) {
					t.Errorf("%s kept, want it removed", k)
				}
			}
		})
	}
}
