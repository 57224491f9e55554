package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	gh "github.com/google/go-github/v60/github"
)

// retryTransport retries transient failures beneath go-github, so that
// go-github only ever sees the final response (see the package doc).
type retryTransport struct {
	next       http.RoundTripper
	maxRetries int
	maxWait    time.Duration
	timeout    time.Duration // of one attempt; 0 for none
	maxBody    int64         // bytes of one answer's body; 0 for no bound
	sleep      func(context.Context, time.Duration) error
	now        func() time.Time
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req
	for attempt := 0; ; attempt++ {
		resp, err := t.send(r)
		if err == nil {
			err = t.limit(r, resp)
		}
		if err != nil {
			// Not retried, a timeout included: the request may have been
			// acted on, and a POST sent again could post twice.
			return nil, err
		}
		wait, retry := t.classify(resp, attempt)
		if !retry || attempt >= t.maxRetries {
			return resp, nil
		}
		if r, err = rewind(req); err != nil {
			return resp, nil // cannot resend the body: the failure stands
		}
		// Drain so the connection can be reused.
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// errAttemptTimeout is the cause of an attempt's context when its own
// timeout, not the caller's context, ended it.
var errAttemptTimeout = errors.New("attempt timed out")

// send makes one attempt at req under the timeout, which runs on until its
// answer's body has been read or closed.
func (t *retryTransport) send(req *http.Request) (*http.Response, error) {
	if t.timeout <= 0 {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeoutCause(req.Context(), t.timeout, errAttemptTimeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		err = t.timedOut(ctx, err)
		cancel()
		return nil, err
	}
	resp.Body = &timeoutBody{ReadCloser: resp.Body, ctx: ctx, cancel: cancel, t: t}
	return resp, nil
}

// timedOut replaces err, an attempt's failure, by ErrTimeout where the
// attempt's own timeout caused it.
func (t *retryTransport) timedOut(ctx context.Context, err error) error {
	if err != nil && !errors.Is(err, io.EOF) && context.Cause(ctx) == errAttemptTimeout {
		return fmt.Errorf("no answer within %v: %w", t.timeout, ErrTimeout)
	}
	return err
}

// timeoutBody is an answer's body read under its attempt's timeout.
type timeoutBody struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelFunc
	t      *retryTransport
}

func (b *timeoutBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		// Read to the end: go-github's CheckResponse replaces a body it
		// has read without closing it.
		b.cancel()
	}
	return n, b.t.timedOut(b.ctx, err)
}

func (b *timeoutBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// limit bounds resp's body to maxBody bytes, beneath go-github's reading
// of it (and classify's, of an error's): a body that does not end is an
// error, not a reason to fill the memory until the timeout. A body longer
// by its Content-Length is refused unread, and closed.
func (t *retryTransport) limit(req *http.Request, resp *http.Response) error {
	if t.maxBody <= 0 {
		return nil
	}
	if resp.ContentLength > t.maxBody {
		resp.Body.Close()
		// The HTTP client names the request around this error.
		return fmt.Errorf("answer of %d bytes by its Content-Length, longer than %d bytes: %w", resp.ContentLength, t.maxBody, ErrResponseTooLarge)
	}
	resp.Body = &limitBody{ReadCloser: resp.Body, left: t.maxBody,
		err: fmt.Errorf("answer to %s %s: longer than %d bytes: %w", req.Method, req.URL.Redacted(), t.maxBody, ErrResponseTooLarge)}
	return nil
}

// limitBody reads at most left more bytes of a body, then fails with err
// if there are more.
type limitBody struct {
	io.ReadCloser
	left     int64
	err      error
	exceeded bool
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.exceeded {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	// One byte past the bound tells a body of exactly left bytes from a
	// longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if int64(n) <= b.left {
		b.left -= int64(n)
		return n, err
	}
	n, b.left, b.exceeded = int(b.left), 0, true
	return n, b.err
}

// rewind returns a copy of req ready to be sent again.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return r, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("request body cannot be replayed")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r.Body = body
	return r, nil
}

// classify says whether resp, the answer to attempt (0-based), is worth
// retrying and after how long. It reads the response the way go-github will,
// through github.CheckResponse and its typed errors.
func (t *retryTransport) classify(resp *http.Response, attempt int) (time.Duration, bool) {
	body := resp.Body
	err := gh.CheckResponse(resp) // restores resp.Body after reading it
	if resp.Body != body {
		// What it read is in the new body; the old one may not have been
		// read to its end (one cut at maxBody), and must be closed to end
		// its connection and its timeout.
		body.Close()
	}
	if err == nil {
		return 0, false
	}
	var (
		primary   *gh.RateLimitError
		secondary *gh.AbuseRateLimitError
		er        *gh.ErrorResponse
	)
	switch {
	case errors.As(err, &primary):
		return t.rateLimitWait(t.untilReset(resp.Header, attempt))
	case errors.As(err, &secondary):
		return t.rateLimitWait(t.secondaryWait(resp.Header, attempt))
	case errors.As(err, &er):
		code := resp.StatusCode
		switch {
		case code >= 500:
			return backoff(attempt), true
		case code != http.StatusForbidden && code != http.StatusTooManyRequests:
			return 0, false // a 4xx is an answer, not an accident
		// go-github types only 403s; GitHub sends 429s too.
		case resp.Header.Get("X-RateLimit-Remaining") == "0":
			return t.rateLimitWait(t.untilReset(resp.Header, attempt))
		case resp.Header.Get("Retry-After") != "":
			return t.rateLimitWait(t.secondaryWait(resp.Header, attempt))
		case code == http.StatusTooManyRequests:
			return t.rateLimitWait(t.secondaryWait(resp.Header, attempt))
		}
	}
	return 0, false // a plain 403 (permissions), or not an API error at all
}

// rateLimitWait refuses waits longer than maxWait: the call fails at once
// instead of sleeping through the job.
func (t *retryTransport) rateLimitWait(d time.Duration) (time.Duration, bool) {
	return d, d <= t.maxWait
}

// untilReset is the wait for a primary rate limit: until X-RateLimit-Reset.
func (t *retryTransport) untilReset(h http.Header, attempt int) time.Duration {
	reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		return backoff(attempt)
	}
	d := time.Unix(reset, 0).Sub(t.now())
	if d <= 0 {
		// Reset already passed by our clock: a skewed clock, or a limit
		// that has just lifted. Wait a little rather than hammer.
		return backoff(attempt)
	}
	return d
}

// secondaryWait is the wait for a secondary rate limit, as GitHub documents
// it: Retry-After if given, else until X-RateLimit-Reset if the quota is
// spent, else at least a minute. (X-RateLimit-Reset alone is the hourly
// quota's reset and says nothing about a secondary limit.)
func (t *retryTransport) secondaryWait(h http.Header, attempt int) time.Duration {
	if s, err := strconv.ParseInt(h.Get("Retry-After"), 10, 64); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		return t.untilReset(h, attempt)
	}
	return max(secondaryWait, backoff(attempt))
}

// backoff is the wait before retry attempt+1 after a server error: the step
// doubles from backoffFirst up to backoffCap, and the wait is drawn from the
// upper half of the step so that clients failing together spread out.
func backoff(attempt int) time.Duration {
	step := backoffCap
	if attempt < 16 {
		step = min(backoffFirst<<attempt, backoffCap)
	}
	half := step / 2
	return half + rand.N(step-half+1)
}
