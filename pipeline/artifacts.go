package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchproof/patchproof/internal/safefs"
)

// artifactsDir is where, under --out, the run leaves what a workflow may
// upload: copies of its evidence, regular files only, made through the
// boundary. The rest of --out was written in part by the code under test
// (a server's directory, the ThreadSanitizer reports), and an uploader that
// follows links (actions/upload-artifact does) would upload what a link
// the code planted points at: the runner's credentials, say.
const artifactsDir = "artifacts"

// Bounds of what is staged: evidence is a few MB; a file or a run that
// grew past these was made large on purpose, and is left out, said so.
const (
	maxArtifact      = 64 << 20
	maxArtifactsRun  = 512 << 20
	artifactsLeftOut = "LEFT-OUT.txt"
)

// stagedArtifact reports whether the run directory's file rel
// (slash-separated) is among the artifacts: the results, the evidence
// the comment names (the benchmark's results, charts, flame graphs and
// samples, ThreadSanitizer's reports, the servers' error logs) and the
// logs. perf.data and the servers' other files are large and named by
// nothing.
func stagedArtifact(rel string) bool {
	switch rel {
	case "results.json", "summary.md", "bench.txt", "junit.xml":
		return true
	}
	top, _, _ := strings.Cut(rel, "/")
	base := path.Base(rel)
	switch top {
	case "logs":
		return true
	case "bench":
		return base == "bench.json" || base == "bench.txt" || strings.HasSuffix(base, ".svg") || base == "error.log"
	case "race":
		return strings.HasSuffix(base, ".tsan.log") || base == "error.log"
	}
	return false
}

// stagedTop are the top directories of the run directory whose files may
// be staged (stagedArtifact).
var stagedTop = map[string]bool{"logs": true, "bench": true, "race": true}

// stageArtifacts copies the artifacts of the run directory dir into
// dir/artifacts, made anew: regular files only, none through a link,
// each and all within their bounds. What it leaves out, and why, is
// listed in artifacts/LEFT-OUT.txt.
func stageArtifacts(dir string) (staged int, err error) {
	dst := filepath.Join(dir, artifactsDir)
	if err := os.RemoveAll(dst); err != nil {
		return 0, fmt.Errorf("stage artifacts: %w", err)
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return 0, fmt.Errorf("stage artifacts: %w", err)
	}
	tree, err := safefs.OpenTree(dir, maxArtifactsRun)
	if err != nil {
		return 0, fmt.Errorf("stage artifacts: %w", err)
	}
	defer tree.Close()
	var left []string
	walkErr := fs.WalkDir(tree.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			left = append(left, fmt.Sprintf("%s: %v", rel, err))
			return nil
		}
		if d.IsDir() && rel != "." && !strings.Contains(rel, "/") && !stagedTop[rel] {
			return fs.SkipDir // the trees, the servers' data: nothing staged
		}
		if d.IsDir() || !stagedArtifact(rel) {
			return nil
		}
		if !d.Type().IsRegular() {
			left = append(left, fmt.Sprintf("%s: not a regular file (%s)", rel, d.Type()))
			return nil
		}
		if err := tree.CopyRegular(rel, filepath.Join(dst, filepath.FromSlash(rel)), maxArtifact); err != nil {
			left = append(left, fmt.Sprintf("%s: %v", rel, err))
			return nil
		}
		staged++
		return nil
	})
	if len(left) > 0 {
		note := "Left out of the run's artifacts (patchproof stages regular files only, within bounds):\n" + strings.Join(left, "\n") + "\n"
		err = safefs.WriteFile(dst, artifactsLeftOut, []byte(note), 0o644)
	}
	return staged, errors.Join(walkErr, err)
}
