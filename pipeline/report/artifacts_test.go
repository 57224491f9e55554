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
		if !uploaded(uploads, path) {
			t.Errorf("the comment names %q (%s), which no upload of validate.yml covers (%q)", name, path, uploads)
		}
	}
}

// uploadPaths are the paths of validate.yml's actions/upload-artifact
// steps, relative to the run directory.
func uploadPaths(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const out = "${{ runner.temp }}/patchproof-out/"
	var paths []string
	inUpload, inPath := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "- "):
			inUpload, inPath = false, false
			if strings.Contains(line, "uses: actions/upload-artifact@") {
				inUpload = true
			}
		case strings.HasPrefix(line, "uses: actions/upload-artifact@"):
			inUpload = true
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
	if len(paths) == 0 {
		t.Fatalf("%s uploads nothing under %s", file, out)
	}
	return paths
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
