package pipeline

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStageArtifactsNeverFollowsALink: the run directory as the code under
// test could leave it in Docker mode (links in the TSan reports directory
// and a server's, a FIFO, a file grown past its bound) beside the run's
// real evidence. The staged copy holds the evidence, regular files only,
// and nothing of what the links point at.
func TestStageArtifactsNeverFollowsALink(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(secret, []byte("TOKEN=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"results.json":                     "{}",
		"summary.md":                       "# summary",
		"logs/build.log":                   "built",
		"bench/PHP-8.2/bench.json":         "{}",
		"bench/PHP-8.2/sweep.svg":          "<svg/>",
		"bench/PHP-8.2/base-on/error.log":  "AH00094",
		"bench/PHP-8.2/base-on/httpd.conf": "not evidence",
		"race/PHP-8.2/head.tsan.log":       "WARNING: ThreadSanitizer",
		"race/PHP-8.2/server/perf.data":    "large",
	}
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for rel, target := range map[string]string{
		"race/PHP-8.2/base.tsan.log":      secret,
		"bench/PHP-8.2/head-on/error.log": "../../../results.json", // a link that stays inside
		"bench/PHP-8.2/flamegraph.svg":    "/etc/hostname",
		"race/PHP-8.2/tsan":               filepath.Dir(secret), // a directory link out
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "race/PHP-8.2/fifo.tsan.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "bench/PHP-8.2/base-off"), 0o755)
	big, err := os.Create(filepath.Join(dir, "bench/PHP-8.2/base-off/error.log"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(maxArtifact + 1) // sparse: a file that claims more than its bound
	big.Close()

	n, err := stageArtifacts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(filepath.Join(dir, artifactsDir), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			t.Errorf("%s staged as %v", p, d.Type())
		}
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), "hunter2") {
			t.Errorf("%s holds the host's secret", p)
		}
		rel, _ := filepath.Rel(filepath.Join(dir, artifactsDir), p)
		got = append(got, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(got)
	want := []string{
		artifactsLeftOut,
		"bench/PHP-8.2/base-on/error.log", "bench/PHP-8.2/bench.json", "bench/PHP-8.2/sweep.svg",
		"logs/build.log", "race/PHP-8.2/head.tsan.log", "results.json", "summary.md",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("staged (-want +got):\n%s", d)
	}
	if n != len(want)-1 {
		t.Errorf("stageArtifacts = %d, want %d", n, len(want)-1)
	}
	note, _ := os.ReadFile(filepath.Join(dir, artifactsDir, artifactsLeftOut))
	for _, rel := range []string{"race/PHP-8.2/base.tsan.log", "bench/PHP-8.2/head-on/error.log", "bench/PHP-8.2/flamegraph.svg", "race/PHP-8.2/fifo.tsan.log", "bench/PHP-8.2/base-off/error.log"} {
		if !strings.Contains(string(note), rel+":") {
			t.Errorf("%s does not say why %s was left out:\n%s", artifactsLeftOut, rel, note)
		}
	}
	// Staged again, the copy is made anew: a link planted in it is gone.
	os.Symlink(secret, filepath.Join(dir, artifactsDir, "planted"))
	if _, err := stageArtifacts(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, artifactsDir, "planted")); !os.IsNotExist(err) {
		t.Errorf("a link in the artifacts survived staging: %v", err)
	}
}

// TestStagedArtifactsHoldWhatTheReportLinks: every file the comment's
// artifact links say an artifact holds (pipeline/report's exampleOf) is
// staged.
func TestStagedArtifactsHoldWhatTheReportLinks(t *testing.T) {
	for _, rel := range []string{
		"results.json", "summary.md", "junit.xml", "bench.txt",
		"bench/PHP-8.2/bench.json", "bench/PHP-8.2/sweep.svg",
		"bench/PHP-8.2/profile/base-on/flamegraph.svg", "race/PHP-8.2/tsan/head.tsan.log",
		"bench/PHP-8.2/cpu/round-01/base-off/error.log", "race/PHP-8.2/server/error.log",
		"logs/build-PHP-8.2-base-nts.log",
	} {
		if !stagedArtifact(rel) {
			t.Errorf("%s is not staged", rel)
		}
	}
	for _, rel := range []string{"bench/PHP-8.2/profile/base-on/perf.data", "race/PHP-8.2/server/httpd.conf", "mysql/data/ibdata1"} {
		if stagedArtifact(rel) {
			t.Errorf("%s is staged, and nothing names it", rel)
		}
	}
}
