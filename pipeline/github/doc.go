// Package github is patchproof's side of GitHub: it names repositories and
// pull requests, resolves a pull request to the commits to validate, keeps
// one sticky summary comment on it up to date, and sets a commit status. It
// owns nothing else; rendering the comment is the report's job, and this
// package posts whatever Markdown it is given.
//
// # Identity
//
// A [Repo] (host, owner, name) is parsed once, by [ParseRepo], where a
// repository URL enters patchproof, and a [PullRequest] (a Repo and a
// number; its head is [PullRequest.HeadRef]) by [ParsePullRequest] or from
// a Repo and --pr. Links, posts and lookups take these values; none
// re-parses a URL.
//
// # Client
//
// A [Client] is built by [New] from [Options] whose zero value talks to
// api.github.com with the token from $GITHUB_TOKEN (or $GH_TOKEN). The token
// is only ever placed in the Authorization header: it is never printed, and
// every error and every line of dry-run output is scrubbed of it. Reads
// (ResolvePR) work without a token on public repositories; writes return
// [ErrNoToken].
//
// With Options.DryRun set, the client still reads (to say exactly what it
// would do) but never calls a write endpoint: it writes the comment, status
// and planned action to the DryRun writer instead.
//
// # Retries
//
// Every request goes through a retrying http.RoundTripper that sits beneath
// go-github. A response is classified with go-github's own typed errors
// (github.CheckResponse, then errors.As):
//
//   - 5xx: exponential backoff from 1s, doubling, capped at 30s, with
//     "equal jitter" (a wait is between half and all of the step).
//   - Primary rate limit (403 or 429 with X-RateLimit-Remaining: 0): wait
//     until X-RateLimit-Reset.
//   - Secondary rate limit (*github.AbuseRateLimitError, or a 403/429 with
//     Retry-After): wait Retry-After, else until X-RateLimit-Reset if the
//     quota is spent, else a minute, as GitHub's documentation asks.
//   - Any other 4xx (404, 422, a plain 403 ...): never retried.
//
// A rate-limit wait longer than Options.MaxWait is not waited at all: the
// limit will not have lifted sooner, so the call fails at once with
// *github.RateLimitError (or *github.AbuseRateLimitError) rather than
// sleeping through a CI job. Retrying beneath go-github matters because
// go-github remembers a rate-limit response and answers later calls itself,
// without a request, until the reset time by the wall clock; here it only
// ever sees the final response, so a retry after the wait really reaches the
// server again. Options.Sleep and Options.Now make all of this instant and
// exact in tests.
//
// # Timeouts
//
// Every request, and each retry of it on its own, must be answered in full
// within Options.Timeout (DefaultTimeout, 30s): an API that accepts and never
// answers, or stops halfway through a body, fails the call with an error
// wrapping [ErrTimeout] instead of hanging the run. A timed-out request is
// not sent again, like any request that got no answer: it may have been acted
// on, and a POST sent twice could post twice.
//
// Every answer's body is bounded too, by Options.MaxResponse
// (DefaultMaxResponse, 16 MiB): reading past it fails the call with an
// error naming the request and wrapping [ErrResponseTooLarge], and one
// longer by its Content-Length is refused unread, so that an API that
// sends without end fills no more memory than that. Comments are listed 30
// a page, so that a page of the longest comments anyone may write still
// fits.
//
// # The sticky comment
//
// [Client.UpsertComment] keeps one comment per PR and [Comment.Key]. The
// comment's first line is a hidden marker
//
//	<!-- patchproof:v1 key=summary run=2025-06-01T12:00:00Z -->
//
// naming the key and the run that wrote it; a run stamp is either a decimal
// run id ($GITHUB_RUN_ID) or an RFC 3339 time. The comment is found again by
// listing every page of the PR's comments, keeping only those written by the
// token's own account (GET /user, or Options.Login for GitHub App and
// Actions tokens, for which GET /user is refused) that carry the key. Then:
//
//   - none: the comment is created ([Created]);
//   - the newest existing run is newer than ours: nothing is written
//     ([SkippedOlder]) — an older run never overwrites a newer one's result;
//   - the body, marker included, is already what we would post: nothing is
//     written ([Unchanged]);
//   - otherwise the comment is edited in place ([Updated]). Identical content
//     from a newer run still updates the marker, so that the stamp always
//     names the newest run whose result is shown.
//
// Two runs that both find no comment both create one. So after creating, a
// run lists again and, if more than one of its comments carries the key,
// keeps the oldest (lowest ID), gives it the newest run's body and deletes
// the rest. Every run that created a duplicate sees the older comment and
// removes its own, and the oldest is never removed, so the PR ends with
// exactly one. What this cannot prevent is two runs editing an existing
// comment at the same moment: GitHub has no conditional update, so between
// one run's read and its write another may write, and the later write wins.
//
// # Earlier runs
//
// A comment that replaces another keeps, below the body it is given, a
// collapsed list of the runs it replaced, newest first: head, verdict and
// the CPU cost of statistics ([HistoryEntry], from [Comment.Entry] or
// Options.Entry), so that a force-push does not erase what a reviewer
// compares a revision with. The list lives in a hidden marker on the
// comment's last line (base64 JSON, read back only from our own comments,
// every entry checked), so it survives every edit; list and marker stay
// within [MaxHistory] characters, the oldest runs dropped first. Its text
// is escaped as any untrusted text is.
//
// # Replies
//
// [Client.Reply] posts a plain comment, never sticky: the answer to one
// trigger. A body that would begin with a command is refused, so the bot
// never triggers itself.
//
// # The commit status
//
// [Client.SetStatus] orders runs as the comment does. A [Status] with a Run
// carries its stamp at the end of its description, "failed: tests (run
// 200)", cut to GitHub's 140 characters with the stamp kept whole. Before
// setting one, the client lists the commit's statuses (newest first, every
// page until it finds one) and takes the newest of its own account in the
// context: when that names a newer run, nothing is written
// ([SkippedOlder]), so that an older run's report posted late never turns
// a newer run's failure green. Unlike the comment's, a run id stands over
// a time and over no stamp: a report outside Actions (stamped with a time,
// or a status without a Run) never covers what a workflow run set, and an
// id covers either. A status whose description names no run lets the
// poster win. Statuses cannot be edited or
// deleted, so two runs that set theirs at the same moment are mended
// after the fact: having set its own, a run lists again and, when a status
// of a newer run was set between its look and its write and ours now hides
// it, sets that run's status again on top.
package github
