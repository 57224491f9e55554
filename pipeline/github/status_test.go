package github_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

func TestSetStatus(t *testing.T) {
	long := strings.Repeat("é", 200)
	tests := []struct {
		name     string
		token    string
		sha      string
		s        github.Status
		want     []githubfake.Status
		wantKind string // "" no error, "invalid" an error before any request
	}{
		{
			name: "success with a target URL", token: botToken, sha: headSHA,
			s: github.Status{State: github.StateSuccess, Description: "NTS identical; tests pass",
				TargetURL: "https://github.com/php/php-src/actions/runs/1"},
			want: []githubfake.Status{{State: "success", Context: "patchproof",
				Description: "NTS identical; tests pass", TargetURL: "https://github.com/php/php-src/actions/runs/1",
				Creator: bot}},
		},
		{
			name: "own context, as an Actions token", token: appToken, sha: baseSHA,
			s:    github.Status{State: github.StatePending, Context: "patchproof/PHP-8.4"},
			want: []githubfake.Status{{State: "pending", Context: "patchproof/PHP-8.4", Creator: app}},
		},
		{
			name: "a long description is cut to 140 characters", token: botToken, sha: headSHA,
			s: github.Status{State: github.StateFailure, Description: long},
			want: []githubfake.Status{{State: "failure", Context: "patchproof",
				Description: strings.Repeat("é", 139) + "…", Creator: bot}},
		},
		{name: "invalid state", token: botToken, sha: headSHA,
			s: github.Status{State: "passed"}, wantKind: "invalid"},
		{name: "no commit", token: botToken,
			s: github.Status{State: github.StateError}, wantKind: "invalid"},
		{name: "no token", sha: headSHA, s: github.Status{State: github.StateError}, wantKind: "no token"},
		{name: "unknown commit", token: botToken, sha: strings.Repeat("3", 40),
			s: github.Status{State: github.StateError}, wantKind: "HTTP 422"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			c, s := newClient(t, f, tt.token, github.Options{Login: app})
			_, err := c.SetStatus(context.Background(), "php", "php-src", tt.sha, tt.s)
			kind := errKind(err)
			if tt.wantKind == "invalid" && strings.HasPrefix(kind, "other: ") {
				kind = "invalid"
			}
			if kind != tt.wantKind {
				t.Errorf("error %v is %q, want %q", err, kind, tt.wantKind)
			}
			if err == nil {
				if diff := cmp.Diff(tt.want, f.Statuses("php", "php-src", tt.sha)); diff != "" {
					t.Errorf("statuses (-want +got):\n%s", diff)
				}
			}
			// Who the token is, the statuses there, the write, and the
			// statuses again (one set since may stand over it).
			wantReqs := 4
			switch tt.wantKind {
			case "invalid", "no token":
				wantReqs = 0
			case "HTTP 422":
				wantReqs = 3
			}
			if n := len(f.Requests()); n != wantReqs {
				t.Errorf("%d requests, want %d", n, wantReqs)
			}
			if w := s.got(); len(w) != 0 {
				t.Errorf("waited %v, want no retries", w)
			}
		})
	}
}

// seed is a status already on headSHA: set by token, its run (if any)
// written in the description as SetStatus writes it.
type seed struct {
	token, context, state, description string
}

// A status is never set over one of ours that names a newer run: an older
// run's report, posted late, leaves the newer run's failure standing.
func TestSetStatusRuns(t *testing.T) {
	failed200 := seed{botToken, "", "failure", "failed: tests (run 200)"}
	others := func(n int) []seed {
		out := make([]seed, n)
		for i := range out {
			out[i] = seed{botToken, "patchproof/PHP-8.4", "success", "passed (run 900)"}
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		seeds []seed
		s     github.Status
		want  github.StatusOutcome
	}{
		{"no status yet", nil, github.Status{State: github.StateSuccess, Description: "passed", Run: "100"},
			github.StatusOutcome{Action: github.Created, Description: "passed (run 100)"}},
		{"a newer run's status stands", []seed{failed200}, github.Status{State: github.StateSuccess, Description: "passed", Run: "100"},
			github.StatusOutcome{Action: github.SkippedOlder, Newer: "200", Description: "passed (run 100)"}},
		{"an older run's status is replaced", []seed{failed200}, github.Status{State: github.StateSuccess, Description: "passed", Run: "300"},
			github.StatusOutcome{Action: github.Created, Description: "passed (run 300)"}},
		{"the same run again: a re-run attempt", []seed{failed200}, github.Status{State: github.StateSuccess, Description: "passed", Run: "200"},
			github.StatusOutcome{Action: github.Created, Description: "passed (run 200)"}},
		{"a newer run found past the first page", append([]seed{failed200}, others(120)...),
			github.Status{State: github.StateSuccess, Description: "passed", Run: "100"},
			github.StatusOutcome{Action: github.SkippedOlder, Newer: "200", Description: "passed (run 100)"}},
		{"another context's newer run does not count", others(1), github.Status{State: github.StateSuccess, Description: "passed", Run: "100"},
			github.StatusOutcome{Action: github.Created, Description: "passed (run 100)"}},
		{"another account's status does not count", []seed{{malloryToken, "", "failure", "failed (run 999)"}},
			github.Status{State: github.StateSuccess, Description: "passed", Run: "100"},
			github.StatusOutcome{Action: github.Created, Description: "passed (run 100)"}},
		{"only our newest status counts", []seed{failed200, {botToken, "", "pending", "running (run 50)"}},
			github.Status{State: github.StateSuccess, Description: "passed", Run: "100"},
			github.StatusOutcome{Action: github.Created, Description: "passed (run 100)"}},
		{"a status without a stamp does not order", []seed{{botToken, "", "failure", "failed"}},
			github.Status{State: github.StateSuccess, Description: "passed", Run: "100"},
			github.StatusOutcome{Action: github.Created, Description: "passed (run 100)"}},
		{"times order as times", []seed{{botToken, "", "failure", "failed (run 2025-06-01T12:00:00Z)"}},
			github.Status{State: github.StateSuccess, Description: "passed", Run: "2025-06-01T11:59:59Z"},
			github.StatusOutcome{Action: github.SkippedOlder, Newer: "2025-06-01T12:00:00Z", Description: "passed (run 2025-06-01T11:59:59Z)"}},
		{"a run id covers a time", []seed{{botToken, "", "failure", "failed (run 2025-06-01T12:00:00Z)"}},
			github.Status{State: github.StateSuccess, Description: "passed", Run: "100"},
			github.StatusOutcome{Action: github.Created, Description: "passed (run 100)"}},
		// A report without GITHUB_RUN_ID (a laptop's) is stamped with a
		// time: it never covers what a workflow run set.
		{"a time never covers a run id", []seed{failed200},
			github.Status{State: github.StateSuccess, Description: "passed", Run: "2099-01-01T00:00:00Z"},
			github.StatusOutcome{Action: github.SkippedOlder, Newer: "200", Description: "passed (run 2099-01-01T00:00:00Z)"}},
		{"no stamp never covers a run id", []seed{failed200},
			github.Status{State: github.StateSuccess, Description: "passed"},
			github.StatusOutcome{Action: github.SkippedOlder, Newer: "200", Description: "passed"}},
		{"no stamp covers a time", []seed{{botToken, "", "failure", "failed (run 2025-06-01T12:00:00Z)"}},
			github.Status{State: github.StateSuccess, Description: "passed"},
			github.StatusOutcome{Action: github.Created, Description: "passed"}},
		{"a cut description keeps its stamp", nil, github.Status{State: github.StateFailure, Description: strings.Repeat("é", 200), Run: "100"},
			github.StatusOutcome{Action: github.Created, Description: strings.Repeat("é", 139-len(" (run 100)")) + "… (run 100)"}},
		{"no description", nil, github.Status{State: github.StatePending, Run: "100"},
			github.StatusOutcome{Action: github.Created, Description: "(run 100)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			for _, sd := range tt.seeds {
				setRaw(t, f, sd.token, headSHA, sd.context, sd.state, sd.description)
			}
			before := f.Statuses("php", "php-src", headSHA)
			c, _ := newClient(t, f, botToken, github.Options{})
			got, err := c.SetStatus(context.Background(), "php", "php-src", headSHA, tt.s)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("outcome (-want +got):\n%s", d)
			}
			if n := utf8.RuneCountInString(got.Description); n > 140 {
				t.Errorf("description of %d characters, GitHub takes 140", n)
			}
			after := f.Statuses("php", "php-src", headSHA)
			want := before
			if tt.want.Action == github.Created {
				want = append(slices.Clone(before), githubfake.Status{State: string(tt.s.State), Context: "patchproof",
					Description: tt.want.Description, Creator: bot})
			}
			if d := cmp.Diff(want, after); d != "" {
				t.Errorf("statuses (-want +got):\n%s", d)
			}
		})
	}
	t.Run("not a run", func(t *testing.T) {
		f := newFake(t)
		c, _ := newClient(t, f, botToken, github.Options{})
		_, err := c.SetStatus(context.Background(), "php", "php-src", headSHA, github.Status{State: github.StateSuccess, Run: "run 7"})
		if err == nil || !strings.Contains(err.Error(), `run "run 7"`) || len(f.Requests()) != 0 {
			t.Errorf("SetStatus = %v after %d requests; want an error naming the run, before any request", err, len(f.Requests()))
		}
	})
}

// A dry run looks, with a token, and says it would leave a newer run's
// status; it writes nothing.
func TestSetStatusRunsDryRun(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, botToken, github.Options{})
	if _, err := c.SetStatus(context.Background(), "php", "php-src", headSHA, github.Status{State: github.StateFailure, Description: "failed", Run: "200"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, token, run string
		want             github.StatusOutcome
		wantOut          string
	}{
		{"older", botToken, "100", github.StatusOutcome{Action: github.DryRun, Planned: github.SkippedOlder, Newer: "200", Description: "passed (run 100)"},
			`dry run: status "patchproof" on php/php-src@` + headSHA + ` shows a newer run (200); would leave it: success "passed (run 100)" ` + "\n"},
		{"newer", botToken, "300", github.StatusOutcome{Action: github.DryRun, Planned: github.Created, Description: "passed (run 300)"},
			`dry run: would set status "patchproof" on php/php-src@` + headSHA + `: success "passed (run 300)" ` + "\n"},
		{"no token to look with", "", "100", github.StatusOutcome{Action: github.DryRun, Description: "passed (run 100)"},
			`dry run: would set status "patchproof" on php/php-src@` + headSHA + `: success "passed (run 100)" ` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			dry, _ := newClient(t, f, tt.token, github.Options{DryRun: &out})
			before := writes(f)
			got, err := dry.SetStatus(context.Background(), "php", "php-src", headSHA, github.Status{State: github.StateSuccess, Description: "passed", Run: tt.run})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("outcome (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantOut, out.String()); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
			if n := writes(f) - before; n != 0 {
				t.Errorf("%d writes, want none", n)
			}
		})
	}
}

// raceTransport lets another run set its status just before this one's
// status is sent: the two runs read the statuses, then both write.
type raceTransport struct {
	once   sync.Once
	before func()
}

func (rt *raceTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/statuses/") {
		rt.once.Do(rt.before)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Two runs that set their status at the same time end with the newer
// run's on top, whichever writes last.
func TestSetStatusRace(t *testing.T) {
	for _, tt := range []struct {
		name       string
		run, other string
		want       github.StatusOutcome
		wantTop    string // the description shown at the end
	}{
		{"the older run writes last", "100", "200",
			github.StatusOutcome{Action: github.SkippedOlder, Newer: "200", Description: "passed (run 100)"}, "failed (run 200)"},
		{"the newer run writes last", "200", "100",
			github.StatusOutcome{Action: github.Created, Description: "passed (run 200)"}, "passed (run 200)"},
		{"a run without an id writes last", "2099-01-01T00:00:00Z", "200",
			github.StatusOutcome{Action: github.SkippedOlder, Newer: "200", Description: "passed (run 2099-01-01T00:00:00Z)"}, "failed (run 200)"},
		{"a status without a stamp writes last", "", "200",
			github.StatusOutcome{Action: github.SkippedOlder, Newer: "200", Description: "passed"}, "failed (run 200)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			other, _ := newClient(t, f, botToken, github.Options{})
			rt := &raceTransport{before: func() {
				if _, err := other.SetStatus(context.Background(), "php", "php-src", headSHA,
					github.Status{State: github.StateFailure, Description: "failed", Run: tt.other}); err != nil {
					t.Error(err)
				}
			}}
			c, _ := newClient(t, f, botToken, github.Options{Transport: rt})
			got, err := c.SetStatus(context.Background(), "php", "php-src", headSHA,
				github.Status{State: github.StateSuccess, Description: "passed", Run: tt.run})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("outcome (-want +got):\n%s", d)
			}
			st := f.Statuses("php", "php-src", headSHA)
			if len(st) == 0 || st[len(st)-1].Description != tt.wantTop {
				t.Errorf("statuses %+v: want %q on top", st, tt.wantTop)
			}
		})
	}
}

// The plan job posts its pending "queued" status as another account than
// the report (the workflow's token, the App's): a second trigger's pending
// status is a newer run that an older run's verdict must not cover, and a
// peer's older run is covered as ours would be.
func TestSetStatusPeers(t *testing.T) {
	for _, tt := range []struct {
		name    string
		pending string // the peer's status
		peers   []string
		want    github.StatusOutcome
	}{
		{"a peer's newer run stands", "queued (run 300)", []string{"mallory"},
			github.StatusOutcome{Action: github.SkippedOlder, Newer: "300", Description: "failed (run 200)"}},
		{"a peer's older run is covered", "queued (run 100)", []string{"mallory"},
			github.StatusOutcome{Action: github.Created, Description: "failed (run 200)"}},
		{"not a peer: it does not count", "queued (run 300)", nil,
			github.StatusOutcome{Action: github.Created, Description: "failed (run 200)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			peer, _ := newClient(t, f, malloryToken, github.Options{})
			if _, err := peer.SetStatus(context.Background(), "php", "php-src", headSHA,
				github.Status{State: github.StatePending, Description: tt.pending}); err != nil {
				t.Fatal(err)
			}
			c, _ := newClient(t, f, botToken, github.Options{Peers: tt.peers})
			got, err := c.SetStatus(context.Background(), "php", "php-src", headSHA, github.Status{State: github.StateFailure, Description: "failed", Run: "200"})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("outcome (-want +got):\n%s", d)
			}
			shown := f.Statuses("php", "php-src", headSHA)
			top := shown[len(shown)-1]
			if wantTop := tt.want.Action == github.Created; (top.Description == "failed (run 200)") != wantTop {
				t.Errorf("the status on top is %q (created: %v)", top.Description, wantTop)
			}
		})
	}
}
