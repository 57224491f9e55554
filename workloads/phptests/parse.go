package phptests

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/patchproof/patchproof/internal/safefs"
)

// statusEntry is one line of run-tests.php's -W file:
//
//	PASSED	/root/ext/mysqli/tests/mysqli_connect.phpt
//	XFAILED	# /root/ext/pdo_mysql/tests/common.phpt: /root/ext/pdo/tests/pdo_022.phpt
//
// The second form is a test run through another's --REDIRECTTEST--.
type statusEntry struct {
	Name    string // from the tree root: ext/pdo/tests/pdo_022.phpt
	Via     string // from the tree root: ext/pdo_mysql/tests/common.phpt, or ""
	Outcome Outcome
	Raw     string // run-tests' word, e.g. "XFAILED"
}

var statusOutcomes = map[string]Outcome{
	"PASSED":  Pass,
	"FAILED":  Fail,
	"SKIPPED": Skip,
	"XFAILED": XFail,
	"BORKED":  Bork,
	"LEAKED":  Leak,
	"XLEAKED": XLeak,
	"WARNED":  Warn,
}

// parseStatus reads a -W file. Paths are made relative to root, the tree
// run-tests ran in. A result word it does not know is kept as a bork with a
// warning rather than dropped: a test must never vanish from a comparison.
func parseStatus(r io.Reader, root string) (entries []statusEntry, warnings []string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	seen := map[string]bool{}
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		word, rest, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, warnings, fmt.Errorf("parse status line %d: no tab in %q", n, line)
		}
		e := statusEntry{Raw: word}
		if v, ok := strings.CutPrefix(rest, "# "); ok {
			via, name, ok := strings.Cut(v, ": ")
			if !ok {
				return nil, warnings, fmt.Errorf("parse status line %d: redirect without \": \" in %q", n, line)
			}
			e.Via, e.Name = relTo(root, via), relTo(root, name)
		} else {
			e.Name = relTo(root, rest)
		}
		o, known := statusOutcomes[word]
		if !known {
			o = Bork
			warnings = append(warnings, fmt.Sprintf("%s: unknown run-tests result %q, counted as bork", e.Name, word))
		}
		e.Outcome = o
		key := e.Via + "\x00" + e.Name
		if seen[key] {
			warnings = append(warnings, fmt.Sprintf("%s: listed again on status line %d, kept once", e.Name, n))
			continue
		}
		seen[key] = true
		if len(entries) == maxTests {
			return nil, warnings, fmt.Errorf("parse status line %d: more than %d tests", n, maxTests)
		}
		entries = append(entries, e)
	}
	return entries, warnings, sc.Err()
}

// Bounds on what a suite's output may put into results.json: the output is
// the tree's code's, and a status file of many lines naming one huge .phpt
// would otherwise repeat its title in every one. The suites have some 700
// tests; titles and reasons are a line; the diffs of a whole suite, each
// already an excerpt, are a few hundred KB at worst.
const (
	maxTests       = 20000
	maxTitle       = 300
	maxReason      = 1000
	maxSuiteDetail = 4 << 20
)

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// relTo makes p relative to root when it lies under it, with slashes.
func relTo(root, p string) string {
	p = strings.TrimSpace(p)
	if root != "" {
		if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(p)
}

// junitCase is one <testcase> of run-tests.php's TEST_PHP_JUNIT file.
type junitCase struct {
	Name    string `xml:"name,attr"` // "ext/mysqli/tests/x.phpt (title)"
	Time    string `xml:"time,attr"`
	Skipped *struct {
		Text string `xml:",chardata"`
	} `xml:"skipped"`
	Failure *junitProblem `xml:"failure"`
	Error   *junitProblem `xml:"error"`
	Warning *struct {
		Text string `xml:",chardata"`
	} `xml:"warning"`
}

type junitProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Details string `xml:",chardata"`
}

// junitDetail is what the JUnit file adds to the status file.
type junitDetail struct {
	Title   string
	Seconds float64
	Reason  string // skip reason or failure message
	Details string // failure details: the diff
}

// junitKey splits "ext/x/tests/a.phpt (Title (with parens))" into the path
// and the title.
var junitKey = regexp.MustCompile(`(?s)^(\S+\.phpt) \((.*)\)$`)

// parseJUnit reads a TEST_PHP_JUNIT file into details by test path as
// run-tests names it there (relative to the tree root; a redirected test is
// named in the redirecting test's directory). The file is lossy: XFAIL shows
// as a pass and some early skips of redirected tests are missing, so the
// status file decides outcomes and this one only adds to them.
func parseJUnit(r io.Reader) (map[string]junitDetail, error) {
	var doc struct {
		Suites []struct {
			Cases []junitCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(r)
	dec.Strict = false
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("parse junit: %w", err)
	}
	out := make(map[string]junitDetail)
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			key, title := c.Name, ""
			if m := junitKey.FindStringSubmatch(c.Name); m != nil {
				key, title = m[1], strings.Join(strings.Fields(m[2]), " ")
			}
			d := junitDetail{Title: clip(title, maxTitle)}
			d.Seconds, _ = strconv.ParseFloat(c.Time, 64)
			switch {
			case c.Skipped != nil:
				d.Reason = strings.TrimSpace(c.Skipped.Text)
			case c.Failure != nil:
				d.Reason, d.Details = strings.TrimSpace(c.Failure.Message), c.Failure.Details
			case c.Error != nil:
				d.Reason, d.Details = strings.TrimSpace(c.Error.Message), c.Error.Details
			case c.Warning != nil:
				d.Reason = strings.TrimSpace(c.Warning.Text)
			}
			d.Reason = clip(d.Reason, maxReason)
			out[key] = d
		}
	}
	return out, nil
}

// junitNames are the names under which the JUnit file may hold a test.
func junitNames(e statusEntry) []string {
	if e.Via == "" {
		return []string{e.Name}
	}
	return []string{path.Join(path.Dir(e.Via), path.Base(e.Name)), e.Name}
}

// diffFile is where run-tests wrote a failed test's diff: next to the test,
// or for a redirected test next to the redirecting one.
// diffFile is where run-tests wrote a failed test's diff, relative to the
// tree's root.
func diffFile(e statusEntry) string {
	dir := path.Dir(e.Name)
	if e.Via != "" {
		dir = path.Dir(e.Via)
	}
	return filepath.Join(filepath.FromSlash(dir), strings.TrimSuffix(path.Base(e.Name), ".phpt")+".diff")
}

// Limits of the diff excerpt kept per failed test.
const (
	maxDiffLines = 60
	maxDiffBytes = 6000
	maxLineBytes = 400
)

// excerpt keeps the start of a diff, cut on line boundaries, long lines
// shortened.
func excerpt(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		if len(l) > maxLineBytes {
			cut := maxLineBytes
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			l = l[:cut] + "…"
		}
		if i == maxDiffLines || b.Len()+len(l)+1 > maxDiffBytes {
			fmt.Fprintf(&b, "… (%d more lines)\n", len(lines)-i)
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// results joins the status entries with the JUnit details and the diffs
// on disk into per-test results.
func results(root string, entries []statusEntry, junit map[string]junitDetail) []TestResult {
	out := make([]TestResult, 0, len(entries))
	detail := 0 // bytes of titles, reasons and diffs so far
	for _, e := range entries {
		t := TestResult{Name: e.Name, Via: e.Via, Outcome: e.Outcome}
		for _, k := range junitNames(e) {
			if d, ok := junit[k]; ok {
				t.Title, t.DurationSeconds, t.Reason = d.Title, d.Seconds, d.Reason
				if e.Outcome != Pass && e.Outcome != Skip {
					t.Diff = d.Details
				}
				break
			}
		}
		if e.Outcome != Pass && e.Outcome != Skip {
			if b, err := safefs.ReadFile(root, diffFile(e), maxOutputFile); err == nil {
				t.Diff = string(b)
			}
		}
		if t.Diff != "" {
			t.Diff = excerpt(t.Diff)
		}
		if t.Title == "" {
			// Not in the JUnit file (it loses early skips): ask the test.
			t.Title = phptTitle(root, filepath.FromSlash(e.Name))
		}
		if detail += len(t.Title) + len(t.Reason) + len(t.Diff); detail > maxSuiteDetail {
			t.Title, t.Reason = clip(t.Title, 40), clip(t.Reason, 40)
			if t.Diff != "" {
				t.Diff = fmt.Sprintf("(left out: the suite's titles, reasons and diffs passed %d MiB)", maxSuiteDetail>>20)
			}
		}
		out = append(out, t)
	}
	return out
}

// phptTitle is the --TEST-- section of the .phpt file rel beneath root,
// or "".
func phptTitle(root, rel string) string {
	f, err := safefs.Open(root, rel)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxOutputFile))
	var title []string
	in, n := false, 0
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case line == "--TEST--":
			in = true
		case in && strings.HasPrefix(line, "--") && strings.HasSuffix(line, "--"):
			return clip(strings.Join(title, " "), maxTitle)
		case in:
			title = append(title, strings.TrimSpace(line))
			if n += len(line); n > maxTitle {
				return clip(strings.Join(title, " "), maxTitle)
			}
		}
	}
	return clip(strings.Join(title, " "), maxTitle)
}
