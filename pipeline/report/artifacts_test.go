package report

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

// runDirPaths are where a run writes each file the comment names, as a
// path of the run directory (one example of a pattern's paths): a file
// the comment names that is not here fails the test, so that a new one is
// checked against the uploads too.
var runDirPaths = map[string]string{
	"results.json":               "results.json",
	"summary.md":                 "summary.md",
	"bench.txt":                  "bench.txt",
	"bench.json":                 "bench/master/bench.json",
	"junit.xml":                  "junit.xml",
	"sweep.svg":                  "bench/master/sweep.svg",
	"profile/ARM/flamegraph.svg": "bench/master/profile/base-on/flamegraph.svg",
	"error.log":                  "bench/master/servers/base-on-1/error.log",
}

// fileRE finds what the comment names as a file: a code span or a bare
// word ending in one of the extensions of the run's files.
var fileRE = regexp.MustCompile("[`\\s(]([A-Za-z0-9_./-]+\\.(?:json|txt|xml|svg|log|md))\\b")

// Every file the comment names is in an artifact the validation workflow
// uploads: validate.yml's upload steps are read for their paths.
func TestCommentNamesOnlyUploadedFiles(t *testing.T) {
	uploads := uploadPaths(t, filepath.Join("..", "..", ".github", "workflows", "validate.yml"))
	rs := resultstest.PRJobs(resultstest.PRTargets...)
	rs[0].Targets[0].Bench.SweepChart = "bench/master/sweep.svg"
	var docs []string
	for _, level := range []int{levelFull, levelNoSamples} {
		var b bytes.Buffer
		if err := renderSummary(&b, rs, renderOptions{level: level}); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b.String())
	}
	var withRace bytes.Buffer
	if err := RenderSummary(&withRace, []*results.Result{resultstest.Racy()}); err != nil {
		t.Fatal(err)
	}
	docs = append(docs, withRace.String())
	named := map[string]bool{}
	for _, doc := range docs {
		for _, m := range fileRE.FindAllStringSubmatch(doc, -1) {
			named[m[1]] = true
		}
	}
	if len(named) < 8 {
		t.Fatalf("the comment names only %v", named)
	}
	for name := range named {
		path, ok := runDirPaths[name]
		// A path of the run directory, as results.json records it.
		if !ok && (strings.HasPrefix(name, "logs/") || strings.HasPrefix(name, "race/") || strings.HasPrefix(name, "bench/")) {
			path, ok = name, true
		}
		if !ok {
			t.Errorf("the comment names %q, which this test does not place in the run directory: add it to runDirPaths", name)
			continue
		}
		if !uploaded(uploads, "artifacts/"+path) {
			t.Errorf("the comment names %q (%s), which no upload of validate.yml covers (%q)", name, path, uploads)
		}
	}
}

// uploadPaths are the paths of validate.yml's actions/upload-artifact
// steps, relative to the run directory.
func uploadPaths(t *testing.T, file string) []string {
	t.Helper()
	var paths []string
	for _, ps := range uploadSteps(t, file) {
		paths = append(paths, ps...)
	}
	return paths
}

// uploadSteps are validate.yml's actions/upload-artifact steps: each
// artifact's name (as written, ${{ matrix.slug }} and all) and its paths
// relative to the run directory.
func uploadSteps(t *testing.T, file string) map[string][]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const out = "${{ runner.temp }}/patchproof-out/"
	steps := map[string][]string{}
	var name string
	var paths []string
	inUpload, inPath := false, false
	end := func() {
		if inUpload && name != "" {
			steps[name] = append(steps[name], paths...)
		}
		name, paths, inUpload, inPath = "", nil, false, false
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "- "):
			end()
			if strings.Contains(line, "uses: actions/upload-artifact@") {
				inUpload = true
			}
		case strings.HasPrefix(line, "uses: actions/upload-artifact@"):
			inUpload = true
		case inUpload && strings.HasPrefix(line, "name:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "name:"))
			inPath = false
		case inUpload && strings.HasPrefix(line, "path:"):
			v := strings.TrimSpace(strings.TrimPrefix(line, "path:"))
			if v == "|" {
				inPath = true
				continue
			}
			paths = append(paths, strings.TrimPrefix(v, out))
		case inPath && strings.HasPrefix(line, out):
			paths = append(paths, strings.TrimPrefix(line, out))
		case inPath:
			inPath = false
		}
	}
	end()
	if len(steps) == 0 {
		t.Fatalf("%s uploads nothing under %s", file, out)
	}
	return steps
}

// uploaded says whether a path of the run directory is covered by one of
// the upload patterns: as @actions/glob reads them, ** any directories, *
// any part of a name, a directory everything under it.
func uploaded(patterns []string, path string) bool {
	for _, p := range patterns {
		if strings.HasSuffix(p, "/") {
			if strings.HasPrefix(path, p) {
				return true
			}
			continue
		}
		re := regexp.QuoteMeta(p)
		re = strings.ReplaceAll(re, `\*\*/`, `(?:.*/)?`)
		re = strings.ReplaceAll(re, `\*`, `[^/]*`)
		if regexp.MustCompile("^" + re + "$").MatchString(path) {
			return true
		}
	}
	return false
}

func TestUploaded(t *testing.T) {
	ps := []string{"results.json", "bench/**/sweep.svg", "race/**/*.tsan.log", "logs/"}
	for path, want := range map[string]bool{
		"results.json": true, "bench/master/sweep.svg": true, "bench/sweep.svg": true,
		"race/PHP-8.4/tsan/head.tsan.log": true, "logs/build.log": true,
		"bench.txt": false, "bench/master/perf.data": false, "race/x/tsan/head.log": false,
	} {
		if got := uploaded(ps, path); got != want {
			t.Errorf("uploaded(%q) = %v, want %v", path, got, want)
		}
	}
}

// exampleOf is a run-directory path of each file or pattern the artifact
// links say an artifact holds.
var exampleOf = map[string]string{
	"results.json":   "results.json",
	"summary.md":     "summary.md",
	"junit.xml":      "junit.xml",
	"bench.txt":      "bench.txt",
	"bench.json":     "bench/PHP-8.2/bench.json",
	"sweep.svg":      "bench/PHP-8.2/sweep.svg",
	"flamegraph.svg": "bench/PHP-8.2/profile/base-on/flamegraph.svg",
	"*.tsan.log":     "race/PHP-8.2/tsan/head.tsan.log",
	"error.log":      "bench/PHP-8.2/cpu/round-01/base-off/error.log",
	"logs/":          "logs/build-PHP-8.2-base-nts.log",
}

// Each target's artifact links (with the run's list of artifacts, as the
// report job reads it) name artifacts validate.yml uploads, and each file
// a link says its artifact holds is in that upload's paths; on the real
// demo's results, shrunk as the comment is and not.
func TestArtifactLinksMatchUploads(t *testing.T) {
	steps := uploadSteps(t, filepath.Join("..", "..", ".github", "workflows", "validate.yml"))
	rs := []*results.Result{readReal(t, "demo")}
	links := map[string]string{}
	for _, k := range artifactKinds {
		links["patchproof-"+k.kind+"-PHP-8.2"] = "https://github.example/o/r/actions/runs/9/artifacts/" + k.kind
	}
	linkRE := regexp.MustCompile(`\[(results|evidence|logs)\]\((\S+)\) \(([^)]*)\)`)
	for _, level := range []int{levelFull, levelNoSamples, levelVerdicts} {
		var b bytes.Buffer
		if err := renderSummary(&b, rs, renderOptions{level: level, artifacts: links}); err != nil {
			t.Fatal(err)
		}
		found := linkRE.FindAllStringSubmatch(b.String(), -1)
		if len(found) != len(artifactKinds) {
			t.Fatalf("level %d: %d artifact links, want %d:\n%s", level, len(found), len(artifactKinds), b.String())
		}
		for _, m := range found {
			kind, url, holds := m[1], m[2], m[3]
			if url != links["patchproof-"+kind+"-PHP-8.2"] {
				t.Errorf("the %s link is %s", kind, url)
			}
			paths, ok := steps["patchproof-"+kind+"-${{ matrix.slug }}"]
			if !ok {
				t.Errorf("validate.yml uploads no artifact patchproof-%s-${{ matrix.slug }} (%v)", kind, steps)
				continue
			}
			for _, f := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(holds, -1) {
				ex, ok := exampleOf[f[1]]
				if !ok {
					t.Errorf("the %s link names %q, which exampleOf does not place in the run directory", kind, f[1])
					continue
				}
				// The workflow uploads only what the run staged in
				// artifacts/, under the same paths.
				if !uploaded(paths, "artifacts/"+ex) {
					t.Errorf("the %s link says it holds %s (%s), which its upload's paths %q do not cover", kind, f[1], ex, paths)
				}
			}
		}
	}
	var b bytes.Buffer
	if err := renderSummary(&b, rs, renderOptions{}); err != nil {
		t.Fatal(err)
	}
	if linkRE.MatchString(b.String()) {
		t.Error("artifact links without the run's list of artifacts")
	}
}
