package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/results"
)

const testRunURL = "https://github.example/patchproof/patchproof/actions/runs/77"

func writeText(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "artifacts.json")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The run's list of artifacts, as gh api --paginate gives its pages or as
// --jq gives objects a line each: the validate jobs' artifacts get a link
// of this run, the newest of one name wins, others are not linked.
func TestReadArtifacts(t *testing.T) {
	pages := `{"total_count": 4, "artifacts": [
  {"id": 11, "name": "patchproof-results-master", "archive_download_url": "https://evil.example/x"},
  {"id": 12, "name": "patchproof-evidence-master"},
  {"id": 13, "name": "something-else"},
  {"id": "not ours, not read", "name": "coverage"},
  {"id": 15, "name": "patchproof-logs-master", "expired": true}]}
{"total_count": 4, "artifacts": [{"id": 21, "name": "patchproof-results-master"}, {"id": 14, "name": "patchproof-logs-PHP-8.4"}]}
`
	lines := `{"id": 11, "name": "patchproof-results-master"}
{"id": 21, "name": "patchproof-results-master"}
{"id": 12, "name": "patchproof-evidence-master"}
{"id": 14, "name": "patchproof-logs-PHP-8.4"}
`
	want := map[string]string{
		"patchproof-results-master":  testRunURL + "/artifacts/21",
		"patchproof-evidence-master": testRunURL + "/artifacts/12",
		"patchproof-logs-PHP-8.4":    testRunURL + "/artifacts/14",
	}
	for name, text := range map[string]string{"pages": pages, "lines": lines} {
		got, err := readArtifacts(writeText(t, text), testRunURL)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
	for name, tt := range map[string]struct{ text, runURL, want string }{
		"no run":        {lines, "", "needs GITHUB_SERVER_URL"},
		"not JSON":      {"<html>", testRunURL, "not the API's list"},
		"an id of text": {`{"id": "12/../../x", "name": "patchproof-logs-master"}`, testRunURL, "not a positive integer"},
		"a negative id": {`{"id": -1, "name": "patchproof-logs-master"}`, testRunURL, "not a positive integer"},
		"a fraction":    {`{"id": 1.5, "name": "patchproof-logs-master"}`, testRunURL, "not a positive integer"},
	} {
		path := writeText(t, tt.text)
		_, err := readArtifacts(path, tt.runURL)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--artifacts "+path) {
			t.Errorf("%s: err = %v, want one naming --artifacts %s and %q", name, err, path, tt.want)
		}
	}
}

// The report links each target's artifacts with this run's URL; a link a
// results.json carries (written where the PR's code ran) is not taken.
func TestReportArtifactLinks(t *testing.T) {
	cleanEnv(t)
	res := jobResult("PHP-8.4", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), results.StatusPassed)
	res.RunURL = "https://evil.example/phish"
	file := writeResult(t, res)
	list := writeText(t, `{"id": 5, "name": "patchproof-results-PHP-8.4"}`+"\n"+`{"id": 6, "name": "patchproof-logs-PHP-8.4"}`+"\n")

	code, stdout, stderr := runReport(t, file)
	if code != 0 || strings.Contains(stdout, "evil.example") {
		t.Errorf("without Actions: exit %d, and the results' own link reached the summary: %v\n%s", code, strings.Contains(stdout, "evil.example"), stderr)
	}
	code, _, stderr = runReport(t, "--artifacts", list, file)
	if code != 2 || !strings.Contains(stderr, "--artifacts "+list) {
		t.Errorf("--artifacts outside a run: exit %d, stderr %q; want 2 naming it", code, stderr)
	}

	t.Setenv("GITHUB_SERVER_URL", "https://github.example")
	t.Setenv("GITHUB_REPOSITORY", "patchproof/patchproof")
	t.Setenv("GITHUB_RUN_ID", "77")
	code, stdout, stderr = runReport(t, "--artifacts", list, file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"- `PHP-8.4`: [results](" + testRunURL + "/artifacts/5) (`results.json`",
		" · [logs](" + testRunURL + "/artifacts/6) (`logs/`)",
		"[The run's artifacts](" + testRunURL + "#artifacts)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "evil.example") || strings.Contains(stdout, "[evidence]") {
		t.Errorf("the summary links the results' own URL or an artifact the list has not:\n%s", stdout)
	}
}
