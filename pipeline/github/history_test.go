package github_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/patchproof/patchproof/pipeline/github"
)

const otherSHA = "3333333333333333333333333333333333333333"

// A run for a moved head keeps the run before it in a collapsed list,
// newest first, from a marker that survives every edit; what the list
// shows is escaped.
func TestHistory(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, botToken, github.Options{})
	ctx := context.Background()
	post := func(run, head, verdict, cost string) string {
		t.Helper()
		_, err := c.UpsertComment(ctx, "php", "php-src", 1, github.Comment{Key: "summary", Run: run, Body: "run " + run + "\n",
			Entry: &github.HistoryEntry{Head: head, Verdict: verdict, Cost: cost}})
		if err != nil {
			t.Fatal(err)
		}
		cs := f.Comments("php", "php-src", 1)
		if len(cs) != 1 {
			t.Fatalf("%d comments, want one", len(cs))
		}
		return cs[0].Body
	}
	first := post("1001", baseSHA, "failed", "master: head +13.9% [+12.1%, +15.0%] <b>|@alice")
	if strings.Contains(first, "Earlier runs") {
		t.Errorf("the first run lists earlier runs:\n%s", first)
	}
	second := post("1002", headSHA, "passed", "master: head +1.7% [+0.9%, +2.4%]")
	if !strings.HasPrefix(second, "<!-- patchproof:v1 key=summary run=1002 -->\nrun 1002\n") {
		t.Errorf("the body does not begin with this run's:\n%s", second)
	}
	want := "<details><summary>Earlier runs (1)</summary>\n\n| run | head | verdict | CPU cost of statistics |\n|---|---|---|---|\n" +
		"| 1001 | `111111111111` | failed | master: head +13.9% \\[+12.1%, +15.0%\\] &lt;b&gt;\\|@\u2060alice |\n\n</details>\n"
	if !strings.Contains(second, want) {
		t.Errorf("the second run's body lacks\n%s\nin\n%s", want, second)
	}
	if strings.Contains(second, "1002 | `222") {
		t.Errorf("the run shown is listed as an earlier one:\n%s", second)
	}
	third := post("1003", otherSHA, "error", "")
	i, j := strings.Index(third, "| 1002 | `222222222222` | passed | master: head +1.7%"), strings.Index(third, "| 1001 | `111111111111` | failed")
	if i < 0 || j < i || !strings.Contains(third, "Earlier runs (2)") {
		t.Errorf("want runs 1002 then 1001, newest first:\n%s", third)
	}
	// The same run posted again changes nothing.
	out, err := c.UpsertComment(ctx, "php", "php-src", 1, github.Comment{Key: "summary", Run: "1003", Body: "run 1003\n",
		Entry: &github.HistoryEntry{Head: otherSHA, Verdict: "error"}})
	if err != nil || out.Action != github.Unchanged {
		t.Errorf("re-post: %v, %v; want unchanged", out.Action, err)
	}
	// An older run's late post leaves the comment and its list alone.
	if out, err := c.UpsertComment(ctx, "php", "php-src", 1, github.Comment{Key: "summary", Run: "999", Body: "old\n",
		Entry: &github.HistoryEntry{Head: baseSHA, Verdict: "passed"}}); err != nil || out.Action != github.SkippedOlder {
		t.Errorf("older run: %v, %v; want skipped", out.Action, err)
	}
	if got := f.Comments("php", "php-src", 1)[0].Body; got != third {
		t.Errorf("an older run changed the comment:\n%s", got)
	}
}

// Many runs keep the list and its marker within MaxHistory, the oldest
// dropped first; a comment without an entry still carries the list.
func TestHistoryBounded(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, botToken, github.Options{Entry: &github.HistoryEntry{Head: headSHA, Verdict: "passed",
		Cost: strings.Repeat("master: head +1.7% [+0.9%, +2.4%]; ", 3)}})
	ctx := context.Background()
	var body string
	for run := 2000; run < 2060; run++ {
		if _, err := c.UpsertComment(ctx, "php", "php-src", 1, github.Comment{Key: "summary", Run: fmt.Sprint(run), Body: "body\n"}); err != nil {
			t.Fatal(err)
		}
		body = f.Comments("php", "php-src", 1)[0].Body
	}
	_, rest, _ := strings.Cut(body, "body\n")
	if n := utf8.RuneCountInString(rest); n > github.MaxHistory || n < github.MaxHistory/2 {
		t.Errorf("history is %d characters, want at most %d and not much less", n, github.MaxHistory)
	}
	if !strings.Contains(rest, "| 2058 |") || strings.Contains(rest, "| 2000 |") {
		t.Errorf("want the newest earlier run kept and the oldest dropped:\n%s", rest)
	}
	// A run that says nothing of itself keeps the list, and the run shown
	// before it joins it.
	plain, _ := newClient(t, f, botToken, github.Options{})
	if _, err := plain.UpsertComment(ctx, "php", "php-src", 1, github.Comment{Key: "summary", Run: "3000", Body: "plain\n"}); err != nil {
		t.Fatal(err)
	}
	got := f.Comments("php", "php-src", 1)[0].Body
	if !strings.Contains(got, "| 2059 |") || !strings.Contains(got, "| 2058 |") {
		t.Errorf("a run without an entry lost the list:\n%s", got)
	}
}

// A marker edited by hand is no history: the list starts again.
func TestHistoryBrokenMarker(t *testing.T) {
	f := newFake(t)
	f.AddComment("php", "php-src", 1, bot, "<!-- patchproof:v1 key=summary run=10 -->\nold\n<!-- patchproof:history v1 !!notbase64 -->\n")
	c, _ := newClient(t, f, botToken, github.Options{})
	if _, err := c.UpsertComment(context.Background(), "php", "php-src", 1, github.Comment{Key: "summary", Run: "11", Body: "new\n",
		Entry: &github.HistoryEntry{Head: headSHA, Verdict: "passed"}}); err != nil {
		t.Fatal(err)
	}
	got := f.Comments("php", "php-src", 1)[0].Body
	if strings.Contains(got, "Earlier runs") || strings.Contains(got, "notbase64") {
		t.Errorf("a broken marker was read or kept:\n%s", got)
	}
}
