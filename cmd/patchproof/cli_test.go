package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/pipeline/demo"
	"github.com/patchproof/patchproof/pipeline/results"
)

// writeTarGz writes files (path → content) as DIR/php.tar.gz, a release
// tarball for demo.Build.
func writeTarGz(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		body := files[name]
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw.Bytes())
	zw.Close()
	tarball := filepath.Join(dir, "php.tar.gz")
	if err := os.WriteFile(tarball, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return tarball
}

// smallPHPRepo makes a php-src-shaped repository with the demo's branches
// (PHP-8.2 and mysqlnd-atomic-stats) from a tiny tarball.
func smallPHPRepo(t *testing.T) string { return smallRepo(t, true) }

// smallRepo makes the same repository without main/php_version.h when php
// is false: not a php-src tree.
func smallRepo(t *testing.T, php bool) string {
	t.Helper()
	files := map[string]string{
		"php/ext/mysqlnd/mysqlnd.c":    "int a;\n",
		"php/ext/mysqlnd/statistics.h": "#define LOCK(x) lock(x)\n",
	}
	if php {
		files["php/main/php_version.h"] = "#define PHP_VERSION \"8.2.99\"\n"
	}
	dir := t.TempDir()
	tarball := writeTarGz(t, dir, files)
	patch := "change\n\ndiff --git a/ext/mysqlnd/statistics.h b/ext/mysqlnd/statistics.h\n--- a/ext/mysqlnd/statistics.h\n+++ b/ext/mysqlnd/statistics.h\n@@ -1 +1 @@\n-#define LOCK(x) lock(x)\n+#define LOCK(x)\n"
	repo := filepath.Join(dir, "php-src.git")
	if err := demo.Build(context.Background(), tarball, "8.2.99", []byte(patch), repo); err != nil {
		t.Fatal(err)
	}
	return repo
}

func TestBadInput(t *testing.T) {
	repo := smallPHPRepo(t)
	notPHP := t.TempDir()
	os.WriteFile(filepath.Join(notPHP, "x"), nil, 0o644)
	readOnly := filepath.Join(t.TempDir(), "ro")
	os.WriteFile(readOnly, []byte("a file, not a dir"), 0o644)

	tests := []struct {
		name  string
		args  []string
		names string // what the one-line error must name
	}{
		{"missing head ref", []string{"--repo", repo, "--base", "PHP-8.2", "--head", "no-such-branch"}, "no-such-branch"},
		{"missing base ref", []string{"--repo", repo, "--base", "PHP-9.9", "--head", "mysqlnd-atomic-stats"}, "PHP-9.9"},
		{"missing PR", []string{"--repo", repo, "--pr", "4242", "--base", "PHP-8.2"}, "pull/4242/head"},
		{"missing path", []string{"--repo", filepath.Join(notPHP, "nope"), "--base", "a", "--head", "b"}, "nope"},
		{"not a repository", []string{"--repo", notPHP, "--base", "a", "--head", "b"}, notPHP},
		{"missing remote", []string{"--repo", "file://" + filepath.Join(notPHP, "gone.git"), "--base", "a", "--head", "b"}, "gone.git"},
		{"unwritable out", []string{"--repo", repo, "--base", "PHP-8.2", "--head", "mysqlnd-atomic-stats", "--out", filepath.Join(readOnly, "out")}, "--out"},
		{"not php-src", []string{"--repo", smallRepo(t, false), "--base", "PHP-8.2", "--head", "mysqlnd-atomic-stats"}, "not a php-src tree"},
		{"unknown stage", []string{"--stages", "checkout,nope"}, "nope"},
		{"unknown variant", []string{"--variants", "nts,xts"}, "xts"},
		{"repo without base", []string{"--repo", repo}, "--base"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "--cache", t.TempDir(), "--out", out}, tt.args...)
			var stdout, stderr bytes.Buffer
			err := patchproof(context.Background(), &stdout, &stderr, args)
			var msg bytes.Buffer
			code := exitCode(&msg, err)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (err %v)", code, err)
			}
			line := strings.TrimSuffix(msg.String(), "\n")
			if strings.Contains(line, "\n") || !strings.Contains(line, tt.names) {
				t.Errorf("error %q: want one line naming %q", line, tt.names)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("bad input left %s behind", out)
			}
		})
	}
}

func TestCheckoutOnly(t *testing.T) {
	repo := smallPHPRepo(t)
	var stdout, stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "out")
	err := patchproof(context.Background(), &stdout, &stderr, []string{"run", "--cache", t.TempDir(), "--out", out,
		"--repo", repo, "--base", "PHP-8.2", "--head", "mysqlnd-atomic-stats", "--stages", "checkout"})
	// The checkout passes; the run, having checked nothing, is no pass.
	if err == nil || err.Error() != results.NothingCheckedReason {
		t.Fatalf("a php-src-shaped repo's checkout: %v; want it through, nothing checked", err)
	}
	// results.json names both commits and the merge-base.
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"is_merge_base": true`, `"ref": "mysqlnd-atomic-stats"`, `"status": "passed"`, `"status": "error"`, `"exit_code": 2`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("results.json lacks %s", want)
		}
	}
}
