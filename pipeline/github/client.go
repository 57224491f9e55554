package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	gh "github.com/google/go-github/v60/github"

	"github.com/patchproof/patchproof/internal/secretenv"
)

// Defaults for the zero [Options], in one place.
const (
	DefaultBaseURL    = "https://api.github.com/"
	DefaultMaxRetries = 4
	DefaultMaxWait    = 2 * time.Minute
	// DefaultTimeout bounds one HTTP request, from sending it to the last
	// byte of its answer. GitHub answers in well under a second; thirty
	// seconds leave room for a slow Enterprise Server.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponse bounds the body of one answer, in bytes: far
	// more than any page patchproof asks for (a page of comments is at
	// most commentsPerPage of GitHub's largest), far less than what would
	// strain a runner's memory.
	DefaultMaxResponse = 16 << 20
	DefaultContext     = "patchproof" // commit status context

	backoffFirst = time.Second      // first wait after a 5xx
	backoffCap   = 30 * time.Second // longest wait after a 5xx
	// secondaryWait is what GitHub asks for after a secondary rate limit
	// that names no time: "wait for at least one minute".
	secondaryWait = time.Minute
	userAgent     = "patchproof"
)

// ErrNoToken is returned by writes when no token was found in the
// environment (and DryRun is not set).
var ErrNoToken = errors.New("no GitHub token: set GITHUB_TOKEN or GH_TOKEN")

// ErrTimeout is wrapped by the error of a call whose request got no whole
// answer within Options.Timeout.
var ErrTimeout = errors.New("GitHub API timeout")

// ErrResponseTooLarge is wrapped by the error of a call whose answer was
// longer than Options.MaxResponse.
var ErrResponseTooLarge = errors.New("GitHub API answer too large")

// ActionsLogin is the account the workflow's own token (GITHUB_TOKEN)
// posts as: the plan job's, whose pending statuses a report's verdict must
// not cover when they are of a newer run (Options.Peers).
const ActionsLogin = "github-actions[bot]"

// Options configures a [Client]. The zero value talks to api.github.com with
// the token from the environment.
type Options struct {
	// BaseURL is the REST API root: "" for api.github.com, or a GitHub
	// Enterprise Server (https://ghe.example.com/ or .../api/v3/), or a
	// githubfake server's URL.
	BaseURL string

	// Getenv looks up the token: GITHUB_TOKEN, else GH_TOKEN. nil means
	// secretenv.Getenv (os.Getenv, but for the token main holds).
	Getenv func(string) string

	// Login is the account to treat as the token's own when GET /user is
	// refused, as it is for GitHub App installation tokens and the Actions
	// GITHUB_TOKEN, e.g. "github-actions[bot]". When GET /user answers, its
	// answer wins.
	Login string

	// Peers are other accounts whose run-stamped statuses in a context
	// count as runs of ours when a status is set (SetStatus): the plan
	// job posts its pending "queued" status with the workflow's token
	// (github-actions[bot]) while the report posts with an App's, and a
	// newer run's pending status must not be covered by an older run's
	// verdict.
	Peers []string

	// Entry is the run the comments this client posts show, for the
	// list of earlier runs (Comment.Entry, where a comment says none).
	Entry *HistoryEntry

	// DryRun, when non-nil, receives what would be posted; no write
	// endpoint is called. Reads still happen when a token is available.
	DryRun io.Writer

	// Transport carries the requests; nil means http.DefaultTransport.
	Transport http.RoundTripper

	// MaxRetries bounds the retries of one request: 0 means
	// DefaultMaxRetries, a negative value means none.
	MaxRetries int

	// MaxWait is the longest single wait for a rate limit; a longer one
	// fails the call at once. 0 means DefaultMaxWait.
	MaxWait time.Duration

	// Timeout bounds each HTTP request, retries each on their own: a
	// request without a whole answer by then fails the call with
	// ErrTimeout, and is not sent again. 0 means DefaultTimeout, a
	// negative value means none.
	Timeout time.Duration

	// MaxResponse bounds the body of each answer, in bytes: a longer one
	// fails the call with ErrResponseTooLarge once that much has been
	// read (at once, when its Content-Length says so), and is not read
	// further. 0 means DefaultMaxResponse, a negative value means none.
	MaxResponse int64

	// Sleep waits d or until ctx is done; nil means a timer. Now is the
	// clock rate-limit resets are measured against; nil means time.Now.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
}

func (o Options) withDefaults() Options {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.Getenv == nil {
		o.Getenv = secretenv.Getenv
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	switch {
	case o.Timeout == 0:
		o.Timeout = DefaultTimeout
	case o.Timeout < 0:
		o.Timeout = 0
	}
	switch {
	case o.MaxResponse == 0:
		o.MaxResponse = DefaultMaxResponse
	case o.MaxResponse < 0:
		o.MaxResponse = 0
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Client talks to one GitHub (or GitHub Enterprise, or githubfake) API. It is
// safe for concurrent use.
type Client struct {
	gh     *gh.Client
	authed bool // a token was found
	login  string
	peers  []string
	entry  *HistoryEntry
	dryRun io.Writer
	now    func() time.Time
	// scrub removes the token from text that leaves the package. It is a
	// closure so that printing a Client cannot show the token.
	scrub func(string) string

	mu   sync.Mutex
	self string // the token's account, once known
}

// CheckBaseURL rejects an API root that is not an http or https URL with a
// host: what Options.BaseURL must be. url.Parse takes a space in the path
// and escapes it, so a root pasted with a space or a second word would
// reach requests as another path: whitespace and control characters are
// refused here, as are a query, a fragment and credentials, which no API
// root has (the token is GITHUB_TOKEN's).
func CheckBaseURL(s string) error {
	if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return fmt.Errorf("not a URL: a space or control character at byte %d", i)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("not an http or https URL")
	case u.Host == "":
		return errors.New("the URL has no host")
	case strings.ContainsAny(s, "?#"):
		return errors.New("an API root has no query or fragment")
	case u.User != nil:
		return errors.New("an API root has no credentials: the token comes from GITHUB_TOKEN or GH_TOKEN")
	}
	return nil
}

// New returns a Client for opts. It fails only on a malformed BaseURL.
func New(opts Options) (*Client, error) {
	o := opts.withDefaults()
	token := ""
	for _, name := range [...]string{"GITHUB_TOKEN", "GH_TOKEN"} {
		if token = strings.TrimSpace(o.Getenv(name)); token != "" {
			break
		}
	}
	rt := &retryTransport{
		next:       o.Transport,
		maxRetries: o.MaxRetries,
		maxWait:    o.MaxWait,
		timeout:    o.Timeout,
		maxBody:    o.MaxResponse,
		sleep:      o.Sleep,
		now:        o.Now,
	}
	g := gh.NewClient(&http.Client{Transport: rt})
	if o.BaseURL != DefaultBaseURL {
		if err := CheckBaseURL(o.BaseURL); err != nil {
			return nil, fmt.Errorf("github client: base URL %s: %w", o.BaseURL, err)
		}
		var err error
		if g, err = g.WithEnterpriseURLs(o.BaseURL, o.BaseURL); err != nil {
			return nil, fmt.Errorf("github client: base URL: %w", err)
		}
	}
	if token != "" {
		g = g.WithAuthToken(token)
	}
	g.UserAgent = userAgent
	return &Client{
		gh:     g,
		authed: token != "",
		login:  o.Login,
		peers:  o.Peers,
		entry:  o.Entry,
		dryRun: o.DryRun,
		now:    o.Now,
		scrub:  scrubber(token),
	}, nil
}

// scrubber returns a function that blanks token out of a string.
func scrubber(token string) func(string) string {
	if token == "" {
		return func(s string) string { return s }
	}
	return func(s string) string { return strings.ReplaceAll(s, token, "[REDACTED]") }
}

// scrubbedError keeps the token out of an error's text while leaving the
// chain intact for errors.As and errors.Is.
type scrubbedError struct {
	err   error
	scrub func(string) string
}

func (e *scrubbedError) Error() string { return e.scrub(e.err.Error()) }
func (e *scrubbedError) Unwrap() error { return e.err }

// fail wraps err as "<op>: <err>" with the token scrubbed out.
func (c *Client) fail(op string, err error) error {
	return &scrubbedError{err: fmt.Errorf("%s: %w", op, err), scrub: c.scrub}
}

// dryRunf writes one line of dry-run output, scrubbed.
func (c *Client) dryRunf(format string, args ...any) error {
	_, err := io.WriteString(c.dryRun, c.scrub(fmt.Sprintf(format, args...)))
	return err
}

// whoami returns the token's account: GET /user, once, or the configured
// Login where GitHub refuses to answer GET /user for this kind of token.
func (c *Client) whoami(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.self != "" {
		return c.self, nil
	}
	u, _, err := c.gh.Users.Get(ctx, "")
	if err == nil && u.GetLogin() != "" {
		c.self = u.GetLogin()
		return c.self, nil
	}
	var er *gh.ErrorResponse
	if c.login != "" && errors.As(err, &er) && er.Response != nil &&
		(er.Response.StatusCode == http.StatusForbidden || er.Response.StatusCode == http.StatusNotFound) {
		c.self = c.login
		return c.self, nil
	}
	if err == nil {
		err = errors.New("empty login")
	}
	if c.login == "" && errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusForbidden {
		err = fmt.Errorf("%w (an App or Actions token? set Options.Login)", err)
	}
	return "", fmt.Errorf("identify the token's account: %w", err)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
