package github_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

const comments = "/repos/php/php-src/issues/1/comments"

// body is what a sticky comment looks like on GitHub.
func body(key, run, text string) string {
	return "<!-- patchproof:v1 key=" + key + " run=" + run + " -->\n" + text
}

// posted is a comment as the test checks it.
type posted struct {
	ID     int64
	Author string
	Body   string
}

func postedOf(cs []githubfake.Comment) []posted {
	var out []posted
	for _, c := range cs {
		out = append(out, posted{c.ID, c.Author, c.Body})
	}
	return out
}

var ignoreURL = cmpopts.IgnoreFields(github.Outcome{}, "URL")

func TestUpsertComment(t *testing.T) {
	// The fake numbers comments from 1001.
	type seed struct{ author, body string }
	type step struct {
		token string // "" means the bot's
		login string // Options.Login
		c     github.Comment
		want  github.Outcome
	}
	tests := []struct {
		name       string
		seed       []seed
		steps      []step
		want       []posted
		wantWrites int
	}{
		{
			name: "created, then the same comment updated",
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "100", Body: "first"},
					want: github.Outcome{Action: github.Created, CommentID: 1001}},
				{c: github.Comment{Key: "summary", Run: "101", Body: "second"},
					want: github.Outcome{Action: github.Updated, CommentID: 1001}},
			},
			want:       []posted{{1001, bot, body("summary", "101", "second")}},
			wantWrites: 2,
		},
		{
			name: "the same run posting the same body again writes nothing",
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "100", Body: "same"},
					want: github.Outcome{Action: github.Created, CommentID: 1001}},
				{c: github.Comment{Key: "summary", Run: "100", Body: "same"},
					want: github.Outcome{Action: github.Unchanged, CommentID: 1001}},
				{c: github.Comment{Key: "summary", Run: "100", Body: "same"},
					want: github.Outcome{Action: github.Unchanged, CommentID: 1001}},
			},
			want:       []posted{{1001, bot, body("summary", "100", "same")}},
			wantWrites: 1,
		},
		{
			name: "a body GitHub hands back with CRLF is still unchanged",
			seed: []seed{{bot, "<!-- patchproof:v1 key=summary run=100 -->\r\nline 1\r\nline 2"}},
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "100", Body: "line 1\nline 2"},
					want: github.Outcome{Action: github.Unchanged, CommentID: 1001}},
			},
			want:       []posted{{1001, bot, "<!-- patchproof:v1 key=summary run=100 -->\r\nline 1\r\nline 2"}},
			wantWrites: 0,
		},
		{
			name: "identical text from a newer run moves the stamp on",
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "100", Body: "same"},
					want: github.Outcome{Action: github.Created, CommentID: 1001}},
				{c: github.Comment{Key: "summary", Run: "101", Body: "same"},
					want: github.Outcome{Action: github.Updated, CommentID: 1001}},
			},
			want:       []posted{{1001, bot, body("summary", "101", "same")}},
			wantWrites: 2,
		},
		{
			name: "an older run does not overwrite a newer one (run ids)",
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "200", Body: "newer"},
					want: github.Outcome{Action: github.Created, CommentID: 1001}},
				{c: github.Comment{Key: "summary", Run: "199", Body: "older"},
					want: github.Outcome{Action: github.SkippedOlder, CommentID: 1001}},
				{c: github.Comment{Key: "summary", Run: "30", Body: "much older"},
					want: github.Outcome{Action: github.SkippedOlder, CommentID: 1001}},
			},
			want:       []posted{{1001, bot, body("summary", "200", "newer")}},
			wantWrites: 1,
		},
		{
			name: "an older run does not overwrite a newer one (times)",
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "2025-06-01T12:00:00Z", Body: "noon"},
					want: github.Outcome{Action: github.Created, CommentID: 1001}},
				{c: github.Comment{Key: "summary", Run: "2025-06-01T13:00:00+02:00", Body: "11:00 UTC"},
					want: github.Outcome{Action: github.SkippedOlder, CommentID: 1001}},
				{c: github.Comment{Key: "summary", Run: "2025-06-01T12:00:00.5Z", Body: "half a second later"},
					want: github.Outcome{Action: github.Updated, CommentID: 1001}},
			},
			want:       []posted{{1001, bot, body("summary", "2025-06-01T12:00:00.5Z", "half a second later")}},
			wantWrites: 2,
		},
		{
			name: "an empty run is stamped with the client's clock",
			seed: []seed{{bot, body("summary", now.Add(-time.Minute).UTC().Format(time.RFC3339), "a minute ago")}},
			steps: []step{
				{c: github.Comment{Key: "summary", Body: "now"},
					want: github.Outcome{Action: github.Updated, CommentID: 1001}},
			},
			want:       []posted{{1001, bot, body("summary", now.UTC().Format(time.RFC3339Nano), "now")}},
			wantWrites: 1,
		},
		{
			name: "a stamp that does not parse is overwritten",
			seed: []seed{{bot, body("summary", "hand-edited", "old")}},
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "5", Body: "new"},
					want: github.Outcome{Action: github.Updated, CommentID: 1001}},
			},
			want:       []posted{{1001, bot, body("summary", "5", "new")}},
			wantWrites: 1,
		},
		{
			name: "other accounts' comments with the marker are ignored",
			seed: []seed{
				{"mallory", body("summary", "999", "spoofed")},
				{"alice", "LGTM\n" + body("summary", "999", "quoted")},
			},
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "1", Body: "ours"},
					want: github.Outcome{Action: github.Created, CommentID: 1003}},
				{token: malloryToken, c: github.Comment{Key: "summary", Run: "1000", Body: "mallory's own"},
					want: github.Outcome{Action: github.Updated, CommentID: 1001}},
				{c: github.Comment{Key: "summary", Run: "2", Body: "ours again"},
					want: github.Outcome{Action: github.Updated, CommentID: 1003}},
			},
			want: []posted{
				{1001, "mallory", body("summary", "1000", "mallory's own")},
				{1002, "alice", "LGTM\n" + body("summary", "999", "quoted")},
				{1003, bot, body("summary", "2", "ours again")},
			},
			wantWrites: 3,
		},
		{
			name: "each key is its own comment",
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "1", Body: "master"},
					want: github.Outcome{Action: github.Created, CommentID: 1001}},
				{c: github.Comment{Key: "backport/PHP-8.4", Run: "1", Body: "8.4"},
					want: github.Outcome{Action: github.Created, CommentID: 1002}},
				{c: github.Comment{Key: "summary", Run: "2", Body: "master again"},
					want: github.Outcome{Action: github.Updated, CommentID: 1001}},
			},
			want: []posted{
				{1001, bot, body("summary", "2", "master again")},
				{1002, bot, body("backport/PHP-8.4", "1", "8.4")},
			},
			wantWrites: 3,
		},
		{
			name: "duplicates left by an earlier crash are removed, oldest kept",
			seed: []seed{
				{bot, body("summary", "5", "five")},
				{"alice", "a review"},
				{bot, body("summary", "7", "seven")},
				{bot, body("summary", "6", "six")},
			},
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "8", Body: "eight"},
					want: github.Outcome{Action: github.Updated, CommentID: 1001, Deleted: []int64{1003, 1004}}},
			},
			want: []posted{
				{1001, bot, body("summary", "8", "eight")},
				{1002, "alice", "a review"},
			},
			wantWrites: 3,
		},
		{
			name: "duplicates holding a newer run: the newest body is kept on the oldest comment",
			seed: []seed{
				{bot, body("summary", "5", "five")},
				{bot, body("summary", "9", "nine")},
			},
			steps: []step{
				{c: github.Comment{Key: "summary", Run: "8", Body: "eight"},
					want: github.Outcome{Action: github.SkippedOlder, CommentID: 1001, Deleted: []int64{1002}}},
			},
			want:       []posted{{1001, bot, body("summary", "9", "nine")}},
			wantWrites: 2,
		},
		{
			name: "an Actions token, refused GET /user, uses the configured login",
			seed: []seed{{app, body("summary", "1", "from the workflow")}},
			steps: []step{
				{token: appToken, login: app, c: github.Comment{Key: "summary", Run: "2", Body: "again"},
					want: github.Outcome{Action: github.Updated, CommentID: 1001}},
			},
			want:       []posted{{1001, app, body("summary", "2", "again")}},
			wantWrites: 1,
		},
		{
			name: "GET /user wins over the configured login",
			seed: []seed{{app, body("summary", "1", "the app's")}},
			steps: []step{
				{login: app, c: github.Comment{Key: "summary", Run: "2", Body: "the bot's"},
					want: github.Outcome{Action: github.Created, CommentID: 1002}},
			},
			want: []posted{
				{1001, app, body("summary", "1", "the app's")},
				{1002, bot, body("summary", "2", "the bot's")},
			},
			wantWrites: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			for _, s := range tt.seed {
				f.AddComment("php", "php-src", 1, s.author, s.body)
			}
			for i, s := range tt.steps {
				token := s.token
				if token == "" {
					token = botToken
				}
				c, _ := newClient(t, f, token, github.Options{Login: s.login})
				got, err := c.UpsertComment(context.Background(), "php", "php-src", 1, s.c)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if diff := cmp.Diff(s.want, got, ignoreURL, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("step %d: outcome (-want +got):\n%s", i, diff)
				}
				if wantURL := fmt.Sprintf("/php/php-src/pull/1#issuecomment-%d", got.CommentID); !strings.HasSuffix(got.URL, wantURL) {
					t.Errorf("step %d: URL = %q, want …%s", i, got.URL, wantURL)
				}
			}
			if diff := cmp.Diff(tt.want, postedOf(f.Comments("php", "php-src", 1))); diff != "" {
				t.Errorf("comments (-want +got):\n%s", diff)
			}
			if n := writes(f); n != tt.wantWrites {
				t.Errorf("%d writes, want %d", n, tt.wantWrites)
			}
		})
	}
}

func TestUpsertCommentErrors(t *testing.T) {
	tests := []struct {
		name     string
		token    string
		login    string
		number   int
		c        github.Comment
		wantKind string
		wantText string
	}{
		{name: "no token", c: github.Comment{Key: "summary", Body: "x"}, wantKind: "no token"},
		{name: "Actions token without a configured login", token: appToken,
			c: github.Comment{Key: "summary", Body: "x"}, wantKind: "HTTP 403", wantText: "Options.Login"},
		{name: "unknown token", token: "ghp_NotKnownToTheFake0000000000000000000",
			c: github.Comment{Key: "summary", Body: "x"}, wantKind: "HTTP 401"},
		{name: "no such PR", token: botToken, number: 2,
			c: github.Comment{Key: "summary", Body: "x"}, wantKind: "HTTP 404", wantText: "list comments"},
		{name: "key with a space", token: botToken,
			c: github.Comment{Key: "two words", Body: "x"}, wantText: "key"},
		{name: "empty key", token: botToken, c: github.Comment{Body: "x"}, wantText: "key"},
		{name: "run that is neither an id nor a time", token: botToken,
			c: github.Comment{Key: "summary", Run: "yesterday", Body: "x"}, wantText: `run "yesterday"`},
		{name: "body over GitHub's limit", token: botToken,
			c: github.Comment{Key: "summary", Body: strings.Repeat("é", 65536)}, wantText: "at most 65536"},
		{name: "body that quotes the token", token: botToken,
			c: github.Comment{Key: "summary", Body: "GITHUB_TOKEN=" + botToken}, wantText: "contains the token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			c, _ := newClient(t, f, tt.token, github.Options{Login: tt.login})
			n := tt.number
			if n == 0 {
				n = 1
			}
			_, err := c.UpsertComment(context.Background(), "php", "php-src", n, tt.c)
			if err == nil {
				t.Fatal("no error")
			}
			if got := errKind(err); tt.wantKind != "" && got != tt.wantKind {
				t.Errorf("error %q is %s, want %s", err, got, tt.wantKind)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not mention %q", err, tt.wantText)
			}
			if strings.Contains(err.Error(), botToken) || strings.Contains(err.Error(), appToken) {
				t.Errorf("error %q shows the token", err)
			}
			if n := writes(f); n != 0 {
				t.Errorf("%d writes, want none", n)
			}
		})
	}
}

func TestUpsertCommentPagination(t *testing.T) {
	tests := []struct {
		foreign   int  // other people's comments before ours
		ours      bool // whether ours is there, last
		wantLists int  // GET requests for the comments
	}{
		// 30 a page: few enough that the longest comments fit under the
		// bound on an answer's size (TestCommentsPageFits).
		{foreign: 0, ours: true, wantLists: 1},
		{foreign: 29, ours: true, wantLists: 1},
		{foreign: 30, ours: true, wantLists: 2},
		{foreign: 31, ours: true, wantLists: 2},
		{foreign: 59, ours: true, wantLists: 2},
		{foreign: 60, ours: true, wantLists: 3},
		{foreign: 250, ours: true, wantLists: 9},
		{foreign: 399, ours: true, wantLists: 14},
		// Not found: listed once, created, listed again (now one more).
		{foreign: 250, wantLists: 9 + 9},
		{foreign: 89, wantLists: 3 + 3},
		{foreign: 90, wantLists: 3 + 4},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d foreign, ours=%v", tt.foreign, tt.ours), func(t *testing.T) {
			f := newFake(t)
			for i := range tt.foreign {
				author := "alice"
				if i%3 == 0 { // a spoof on every page, ignored
					author = "mallory"
				}
				f.AddComment("php", "php-src", 1, author, body("summary", "9999", fmt.Sprintf("comment %d", i)))
			}
			wantAction := github.Created
			if tt.ours {
				f.AddComment("php", "php-src", 1, bot, body("summary", "1", "ours"))
				wantAction = github.Updated
			}
			wantID := int64(1000 + tt.foreign + 1)
			c, _ := newClient(t, f, botToken, github.Options{})
			got, err := c.UpsertComment(context.Background(), "php", "php-src", 1,
				github.Comment{Key: "summary", Run: "2", Body: "updated"})
			if err != nil {
				t.Fatal(err)
			}
			want := github.Outcome{Action: wantAction, CommentID: wantID}
			if diff := cmp.Diff(want, got, ignoreURL); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			var lists int
			for _, r := range f.Requests() {
				if r.Method != "GET" || r.Path != comments {
					continue
				}
				lists++
				if q, _ := url.ParseQuery(r.Query); q.Get("per_page") != "30" {
					t.Errorf("listed with %q, want per_page=30", r.Query)
				}
			}
			if lists != tt.wantLists {
				t.Errorf("listed %d pages, want %d", lists, tt.wantLists)
			}
			all := f.Comments("php", "php-src", 1)
			if n := len(all); n != tt.foreign+1 {
				t.Errorf("%d comments, want %d", n, tt.foreign+1)
			}
			if last := all[len(all)-1]; last.Author != bot || last.Body != body("summary", "2", "updated") {
				t.Errorf("last comment = %+v, want ours, updated", last)
			}
		})
	}
}

// TestUpsertCommentConcurrent runs several posters at once, each with its
// own client as separate CI jobs would be, and checks that one comment is
// left.
func TestUpsertCommentConcurrent(t *testing.T) {
	tests := []struct {
		name    string
		runs    int
		barrier bool          // every run's create lands before any run looks again
		latency time.Duration // or just slow answers, and whatever interleaving comes
		seed    bool          // a comment from an earlier run exists
	}{
		{name: "two runs, both create", runs: 2, barrier: true},
		{name: "five runs, all create", runs: 5, barrier: true},
		{name: "six runs with latency", runs: 6, latency: 3 * time.Millisecond},
		{name: "six runs with latency, comment exists", runs: 6, latency: 3 * time.Millisecond, seed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			if tt.seed {
				f.AddComment("php", "php-src", 1, bot, body("summary", "0", "run 0"))
			}
			f.AddComment("php", "php-src", 1, "alice", "a review")
			if tt.barrier {
				f.Barrier("POST", comments, tt.runs)
			}
			f.SetLatency(tt.latency)

			outcomes := make([]github.Outcome, tt.runs)
			errs := make([]error, tt.runs)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range tt.runs {
				c, _ := newClient(t, f, botToken, github.Options{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					run := fmt.Sprint(i + 1)
					outcomes[i], errs[i] = c.UpsertComment(context.Background(), "php", "php-src", 1,
						github.Comment{Key: "summary", Run: run, Body: "run " + run})
				}()
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("run %d: %v", i+1, err)
				}
			}

			var ours []githubfake.Comment
			for _, c := range f.Comments("php", "php-src", 1) {
				if c.Author == bot {
					ours = append(ours, c)
				}
			}
			if len(ours) != 1 {
				t.Fatalf("%d comments of ours, want 1:\n%+v", len(ours), ours)
			}
			for i, o := range outcomes {
				if o.CommentID != ours[0].ID {
					t.Errorf("run %d reports comment %d, want %d", i+1, o.CommentID, ours[0].ID)
				}
			}
			if tt.barrier {
				// Every run created a comment, and the newest run's body is
				// the one left, on the oldest comment.
				if n := f.Count("POST", comments); n != tt.runs {
					t.Errorf("%d comments created, want %d", n, tt.runs)
				}
				want := posted{1002, bot, body("summary", fmt.Sprint(tt.runs), fmt.Sprintf("run %d", tt.runs))}
				if diff := cmp.Diff(want, postedOf(ours)[0]); diff != "" {
					t.Errorf("comment left (-want +got):\n%s", diff)
				}
			}
		})
	}
}
