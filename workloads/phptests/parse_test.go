package phptests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/golden"
)

// goldenRoot is the tree run-tests ran in when testdata/real was recorded
// (PHP 8.2.32 NTS, MariaDB 10.11 started by workloads/mysqld): the status
// files name tests by absolute path under it.
const goldenRoot = "/tmp/pp-golden/a/tree"

// TestParseRealRun parses the status and JUnit files of a real full run of
// both suites into per-test results, pinned by a golden file, and checks
// the counts against run-tests' own summary of that run.
func TestParseRealRun(t *testing.T) {
	tests := []struct {
		suite string
		want  Counts // from run-tests' summary in testdata/real/run-tests.log
	}{
		{"ext_mysqli_tests", Counts{Total: 448, Pass: 405, Fail: 2, Skip: 38, XFail: 3}},
		{"ext_pdo_mysql_tests", Counts{Total: 236, Pass: 224, Fail: 2, Skip: 9, XFail: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.suite, func(t *testing.T) {
			st, err := os.Open(filepath.Join("testdata", "real", tt.suite+".status.txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			entries, warnings, err := parseStatus(st, goldenRoot)
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings: %v", warnings)
			}
			jf, err := os.Open(filepath.Join("testdata", "real", tt.suite+".junit.xml"))
			if err != nil {
				t.Fatal(err)
			}
			defer jf.Close()
			junit, err := parseJUnit(jf)
			if err != nil {
				t.Fatal(err)
			}
			// No .diff files here: the diffs come from the JUnit file.
			got := NewSuiteRun(strings.ReplaceAll(tt.suite, "_tests", "/tests"), results(t.TempDir(), entries, junit), 0)
			if diff := cmp.Diff(tt.want, got.Counts); diff != "" {
				t.Errorf("counts (-run-tests' summary +parsed):\n%s", diff)
			}
			for _, r := range got.Tests {
				if strings.HasPrefix(r.Name, "/") {
					t.Errorf("%+v: want a tree-relative name", r)
				}
				if (r.Outcome == Fail) != (r.Diff != "") {
					t.Errorf("%s: outcome %s with diff %q", r.Name, r.Outcome, r.Diff)
				}
			}
			var b strings.Builder
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(got); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.suite+".results.golden.json"), []byte(b.String()))
		})
	}
}

func TestParseStatus(t *testing.T) {
	in := "PASSED\t/r/ext/mysqli/tests/a.phpt\n" +
		"\n" +
		"XFAILED\t# /r/ext/pdo_mysql/tests/common.phpt: /r/ext/pdo/tests/pdo_022.phpt\n" +
		"EXPLODED\t/r/ext/mysqli/tests/b.phpt\n"
	got, warnings, err := parseStatus(strings.NewReader(in), "/r")
	if err != nil {
		t.Fatal(err)
	}
	want := []statusEntry{
		{Name: "ext/mysqli/tests/a.phpt", Outcome: Pass, Raw: "PASSED"},
		{Name: "ext/pdo/tests/pdo_022.phpt", Via: "ext/pdo_mysql/tests/common.phpt", Outcome: XFail, Raw: "XFAILED"},
		{Name: "ext/mysqli/tests/b.phpt", Outcome: Bork, Raw: "EXPLODED"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseStatus (-want +got):\n%s", diff)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "EXPLODED") {
		t.Errorf("warnings = %q, want one naming EXPLODED", warnings)
	}
	for _, bad := range []string{"PASSED /no/tab.phpt\n", "PASSED\t# /r/a.phpt /r/b.phpt\n"} {
		if _, _, err := parseStatus(strings.NewReader(bad), "/r"); err == nil {
			t.Errorf("parseStatus(%q) succeeded", bad)
		}
	}
}

func TestExcerpt(t *testing.T) {
	var long []string
	for i := 0; i < 100; i++ {
		long = append(long, "001+ line")
	}
	tests := []struct {
		name, in, want string
	}{
		{"short", "a\nb\n", "a\nb"},
		{"many lines", strings.Join(long, "\n"), strings.Join(long[:maxDiffLines], "\n") + "\n… (40 more lines)"},
		{"one huge line", strings.Repeat("x", 10000), strings.Repeat("x", maxLineBytes) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, excerpt(tt.in)); diff != "" {
				t.Errorf("excerpt (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOutputBoundedInResults: a status file of many lines naming one 2 MB
// .phpt (a link the tree made to it, fifty times over) and a JUnit file of
// huge titles and reasons give results of a bounded size.
func TestOutputBoundedInResults(t *testing.T) {
	root := t.TempDir()
	huge := "--TEST--\n" + strings.Repeat("a title that never ends\n", 90000) + "\n--FILE--\n<?php\n"
	if err := os.MkdirAll(filepath.Join(root, "ext/mysqli/tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "ext/mysqli/tests/huge.phpt"), []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	var status strings.Builder
	for i := range 50 {
		name := fmt.Sprintf("ext/mysqli/tests/l%d.phpt", i)
		if err := os.Symlink("huge.phpt", filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&status, "SKIPPED\t%s/%s\nSKIPPED\t%s/%s\n", root, name, root, name)
	}
	entries, warnings, err := parseStatus(strings.NewReader(status.String()), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 50 || len(warnings) != 50 {
		t.Errorf("parseStatus = %d entries, %d warnings; want 50 and 50 (each listed twice)", len(entries), len(warnings))
	}
	junit, err := parseJUnit(strings.NewReader(`<testsuites><testsuite><testcase name="ext/mysqli/tests/l0.phpt (` +
		strings.Repeat("t", 1<<20) + `)"><skipped>` + strings.Repeat("r", 1<<20) + `</skipped></testcase></testsuite></testsuites>`))
	if err != nil {
		t.Fatal(err)
	}
	tests := results(root, entries, junit)
	data, err := json.Marshal(tests)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 64<<10 {
		t.Errorf("50 tests take %d bytes of results, want at most 64 KiB", len(data))
	}
	if !strings.HasPrefix(tests[1].Title, "a title that never ends") {
		t.Errorf("title = %.40q, want the test's own, cut", tests[1].Title)
	}
	var many strings.Builder
	for i := range maxTests + 1 {
		fmt.Fprintf(&many, "PASSED\t/t/%d.phpt\n", i)
	}
	if _, _, err := parseStatus(strings.NewReader(many.String()), "/t"); err == nil {
		t.Errorf("a status file of %d tests parsed, want an error", maxTests+1)
	}
}
