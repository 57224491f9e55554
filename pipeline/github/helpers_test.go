package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

// Tokens the fake knows. They are distinctive so that a leak is easy to spot.
const (
	botToken     = "ghp_B0tT0kenThatMustNeverBeSeen0000000001"
	appToken     = "ghs_AppT0kenThatMustNeverBeSeen000000002"
	malloryToken = "ghp_Ma11oryT0ken000000000000000000000003"

	bot = "patchproof-bot"
	app = "github-actions[bot]"

	baseSHA = "1111111111111111111111111111111111111111"
	headSHA = "2222222222222222222222222222222222222222"
)

// newFake serves php/php-src#1, a PR from alice's fork.
func newFake(t *testing.T) *githubfake.Fake {
	t.Helper()
	f := githubfake.New(t)
	f.AddUser(bot, botToken)
	f.AddUser("mallory", malloryToken)
	f.AddAppToken(app, appToken)
	f.AddPR(githubfake.PR{
		Owner: "php", Repo: "php-src", Number: 1,
		Title: "mysqlnd: use relaxed atomics for statistics",
		Base:  githubfake.Branch{Ref: "master", SHA: baseSHA},
		Head:  githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: headSHA},
	})
	return f
}

// sleeper records waits instead of waiting.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeper) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// env is a Getenv with only the given variables set.
func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

// now is the tests' clock: the wall clock, so that rate-limit resets are
// in the real future, where go-github would refuse to send a request.
var now = time.Now().Truncate(time.Second)

// newClient returns a client of f with the token, instant sleeps and a
// fixed clock; opts fills in anything else.
func newClient(t *testing.T, f *githubfake.Fake, token string, opts github.Options) (*github.Client, *sleeper) {
	t.Helper()
	s := &sleeper{}
	if opts.BaseURL == "" {
		opts.BaseURL = f.URL()
	}
	if opts.Getenv == nil {
		opts.Getenv = env("GITHUB_TOKEN", token)
	}
	if opts.Sleep == nil {
		opts.Sleep = s.sleep
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return now }
	}
	c, err := github.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// errKind names an error by its type and status, for comparing in tables.
func errKind(err error) string {
	var (
		nf        *github.NoSuchPRError
		primary   *gh.RateLimitError
		secondary *gh.AbuseRateLimitError
		er        *gh.ErrorResponse
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, github.ErrNoToken):
		return "no token"
	case errors.As(err, &nf):
		return "no such PR"
	case errors.As(err, &primary):
		return "rate limit"
	case errors.As(err, &secondary):
		return "secondary rate limit"
	case errors.As(err, &er):
		return fmt.Sprintf("HTTP %d", er.Response.StatusCode)
	}
	return "other: " + err.Error()
}

// writes counts the requests that change something.
func writes(f *githubfake.Fake) int {
	return f.Count(http.MethodPost, "") + f.Count(http.MethodPatch, "") + f.Count(http.MethodDelete, "")
}

// setRaw sets a status as any client of the API would, past SetStatus's
// rules: a status some run left, as it left it; context "" is
// DefaultContext.
func setRaw(t *testing.T, f *githubfake.Fake, token, sha, statusContext, state, description string) {
	t.Helper()
	g, err := gh.NewClient(nil).WithAuthToken(token).WithEnterpriseURLs(f.URL(), f.URL())
	if err != nil {
		t.Fatal(err)
	}
	if statusContext == "" {
		statusContext = github.DefaultContext
	}
	st := &gh.RepoStatus{State: gh.String(state), Context: gh.String(statusContext), Description: gh.String(description)}
	if _, _, err := g.Repositories.CreateStatus(context.Background(), "php", "php-src", sha, st); err != nil {
		t.Fatal(err)
	}
}
