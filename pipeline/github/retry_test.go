package github_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

func TestRetry(t *testing.T) {
	const (
		pulls    = "/repos/php/php-src/pulls/1"
		statuses = "/repos/php/php-src/statuses/"
	)
	type result struct {
		Err      string
		Requests int             // to the failing endpoint
		Waits    []time.Duration // exact waits
		Steps    []time.Duration // backoff steps: a wait must lie in [step/2, step]
	}
	tests := []struct {
		name       string
		opts       github.Options
		post       bool // SetStatus (a POST with a body) instead of ResolvePR
		inject     func(f *githubfake.Fake)
		want       result
		wantStatus []githubfake.Status // for post
	}{
		{
			name:   "502 twice, then the answer",
			inject: func(f *githubfake.Fake) { f.FailNext("GET", pulls, http.StatusBadGateway, 2) },
			want:   result{Requests: 3, Steps: []time.Duration{time.Second, 2 * time.Second}},
		},
		{
			name:   "500 on a POST resends the body",
			post:   true,
			inject: func(f *githubfake.Fake) { f.FailNext("POST", statuses, http.StatusInternalServerError, 1) },
			want:   result{Requests: 2, Steps: []time.Duration{time.Second}},
			wantStatus: []githubfake.Status{{
				State: "success", Context: "patchproof", Description: "455/455 functions identical",
				TargetURL: "https://example.com/run/1", Creator: bot,
			}},
		},
		{
			name:   "503 until retries run out",
			opts:   github.Options{MaxRetries: 3},
			inject: func(f *githubfake.Fake) { f.FailNext("GET", pulls, http.StatusServiceUnavailable, 10) },
			want: result{Err: "HTTP 503", Requests: 4,
				Steps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		},
		{
			name:   "backoff is capped",
			opts:   github.Options{MaxRetries: 7},
			inject: func(f *githubfake.Fake) { f.FailNext("GET", pulls, http.StatusBadGateway, 7) },
			want: result{Requests: 8, Steps: []time.Duration{
				time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
				16 * time.Second, 30 * time.Second, 30 * time.Second}},
		},
		{
			name:   "no retries when MaxRetries is negative",
			opts:   github.Options{MaxRetries: -1},
			inject: func(f *githubfake.Fake) { f.FailNext("GET", pulls, http.StatusBadGateway, 1) },
			want:   result{Err: "HTTP 502", Requests: 1},
		},
		{
			name: "primary rate limit (403) waits until the reset",
			inject: func(f *githubfake.Fake) {
				f.Inject("GET", pulls, 1, githubfake.PrimaryRateLimit(http.StatusForbidden, now.Add(30*time.Second)))
			},
			want: result{Requests: 2, Waits: []time.Duration{30 * time.Second}},
		},
		{
			name: "primary rate limit (429) waits until the reset",
			inject: func(f *githubfake.Fake) {
				f.Inject("GET", pulls, 1, githubfake.PrimaryRateLimit(http.StatusTooManyRequests, now.Add(90*time.Second)))
			},
			want: result{Requests: 2, Waits: []time.Duration{90 * time.Second}},
		},
		{
			name: "primary rate limit on a POST",
			post: true,
			inject: func(f *githubfake.Fake) {
				f.Inject("POST", statuses, 1, githubfake.PrimaryRateLimit(http.StatusForbidden, now.Add(5*time.Second)))
			},
			want: result{Requests: 2, Waits: []time.Duration{5 * time.Second}},
			wantStatus: []githubfake.Status{{
				State: "success", Context: "patchproof", Description: "455/455 functions identical",
				TargetURL: "https://example.com/run/1", Creator: bot,
			}},
		},
		{
			name: "primary rate limit past MaxWait fails at once",
			inject: func(f *githubfake.Fake) {
				f.Inject("GET", pulls, 1, githubfake.PrimaryRateLimit(http.StatusForbidden, now.Add(time.Hour)))
			},
			want: result{Err: "rate limit", Requests: 1},
		},
		{
			name: "secondary rate limit (403) waits Retry-After",
			inject: func(f *githubfake.Fake) {
				f.Inject("GET", pulls, 1, githubfake.SecondaryRateLimit(http.StatusForbidden, 45*time.Second))
			},
			want: result{Requests: 2, Waits: []time.Duration{45 * time.Second}},
		},
		{
			name: "secondary rate limit (429) waits Retry-After",
			inject: func(f *githubfake.Fake) {
				f.Inject("GET", pulls, 2, githubfake.SecondaryRateLimit(http.StatusTooManyRequests, 7*time.Second))
			},
			want: result{Requests: 3, Waits: []time.Duration{7 * time.Second, 7 * time.Second}},
		},
		{
			name: "secondary rate limit without Retry-After waits a minute",
			inject: func(f *githubfake.Fake) {
				flt := githubfake.SecondaryRateLimit(http.StatusForbidden, 0)
				flt.Header = nil
				f.Inject("GET", pulls, 1, flt)
			},
			want: result{Requests: 2, Waits: []time.Duration{time.Minute}},
		},
		{
			name: "secondary rate limit past MaxWait fails at once",
			opts: github.Options{MaxWait: 30 * time.Second},
			inject: func(f *githubfake.Fake) {
				f.Inject("GET", pulls, 1, githubfake.SecondaryRateLimit(http.StatusForbidden, time.Minute))
			},
			want: result{Err: "secondary rate limit", Requests: 1},
		},
		{
			name:   "404 is not retried",
			inject: func(f *githubfake.Fake) { f.FailNext("GET", pulls, http.StatusNotFound, 1) },
			want:   result{Err: "no such PR", Requests: 1},
		},
		{
			name:   "422 is not retried",
			post:   true,
			inject: func(f *githubfake.Fake) { f.FailNext("POST", statuses, http.StatusUnprocessableEntity, 1) },
			want:   result{Err: "HTTP 422", Requests: 1},
		},
		{
			name:   "403 without rate-limit headers is not retried",
			inject: func(f *githubfake.Fake) { f.FailNext("GET", pulls, http.StatusForbidden, 1) },
			want:   result{Err: "HTTP 403", Requests: 1},
		},
		{
			name:   "401 is not retried",
			inject: func(f *githubfake.Fake) { f.FailNext("GET", pulls, http.StatusUnauthorized, 1) },
			want:   result{Err: "HTTP 401", Requests: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			c, s := newClient(t, f, botToken, tt.opts)
			tt.inject(f)
			ctx := context.Background()

			var err error
			path := pulls
			if tt.post {
				path = statuses
				_, err = c.SetStatus(ctx, "php", "php-src", headSHA, github.Status{
					State: github.StateSuccess, Description: "455/455 functions identical",
					TargetURL: "https://example.com/run/1",
				})
			} else {
				_, err = c.ResolvePR(ctx, "php", "php-src", 1)
			}
			got := result{Err: errKind(err), Requests: f.Count("", path)}
			waits := s.got()
			if tt.want.Steps == nil {
				got.Waits = waits
			} else {
				for i, w := range waits {
					if i < len(tt.want.Steps) && (w < tt.want.Steps[i]/2 || w > tt.want.Steps[i]) {
						t.Errorf("wait %d = %v, want in [%v, %v]", i, w, tt.want.Steps[i]/2, tt.want.Steps[i])
					}
					got.Steps = append(got.Steps, tt.want.Steps[min(i, len(tt.want.Steps)-1)])
				}
				if len(waits) != len(tt.want.Steps) {
					t.Errorf("%d waits, want %d", len(waits), len(tt.want.Steps))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if tt.post {
				if diff := cmp.Diff(tt.wantStatus, f.Statuses("php", "php-src", headSHA)); diff != "" {
					t.Errorf("statuses (-want +got):\n%s", diff)
				}
			}

			// Once the call has succeeded, the next one reaches the server:
			// nothing remembers the rate limit the retry got past.
			if err == nil {
				before := f.Count("GET", pulls)
				if _, err := c.ResolvePR(ctx, "php", "php-src", 1); err != nil {
					t.Errorf("next call: %v", err)
				}
				if n := f.Count("GET", pulls) - before; n != 1 {
					t.Errorf("next call sent %d requests, want 1", n)
				}
			}
		})
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	f := newFake(t)
	ctx, cancel := context.WithCancel(context.Background())
	c, _ := newClient(t, f, botToken, github.Options{
		Sleep: func(ctx context.Context, d time.Duration) error {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		},
	})
	f.FailNext("GET", "/repos/php/php-src/pulls/1", http.StatusBadGateway, 5)
	_, err := c.ResolvePR(ctx, "php", "php-src", 1)
	if err == nil || ctx.Err() == nil {
		t.Fatalf("ResolvePR = %v, want the context's error", err)
	}
	if n := f.Count("", "/repos/php/php-src/pulls/1"); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
