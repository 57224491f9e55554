package github_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/patchproof/patchproof/pipeline/github"
)

// hangingListener accepts connections and never reads from or answers them.
func hangingListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String() + "/"
}

// hangingServer serves every request with answer, which may hang until its
// done channel closes; it returns the server's URL and a request counter.
func hangingServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, n int64, done <-chan struct{})) (string, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer(w, r, requests.Add(1), done)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // before srv.Close, which waits for handlers
	return srv.URL + "/", &requests
}

func hang(r *http.Request, done <-chan struct{}) {
	select {
	case <-done:
	case <-r.Context().Done():
	}
}

func TestRequestTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	tests := []struct {
		name     string
		server   func(t *testing.T) (string, *atomic.Int64)
		post     bool  // SetStatus instead of ResolvePR
		requests int64 // the server saw; -1 where it cannot count them
	}{
		{
			name:     "accepts the connection and never answers",
			server:   func(t *testing.T) (string, *atomic.Int64) { return hangingListener(t), nil },
			requests: -1,
		},
		{
			name: "reads the request and never answers",
			server: func(t *testing.T) (string, *atomic.Int64) {
				return hangingServer(t, func(w http.ResponseWriter, r *http.Request, _ int64, done <-chan struct{}) { hang(r, done) })
			},
			requests: 1,
		},
		{
			name: "a POST is not sent again",
			server: func(t *testing.T) (string, *atomic.Int64) {
				return hangingServer(t, func(w http.ResponseWriter, r *http.Request, _ int64, done <-chan struct{}) { hang(r, done) })
			},
			post:     true,
			requests: 1,
		},
		{
			name: "answers the headers and never the whole body",
			server: func(t *testing.T) (string, *atomic.Int64) {
				return hangingServer(t, func(w http.ResponseWriter, r *http.Request, _ int64, done <-chan struct{}) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusOK)
					w.Write([]byte(`{"number": 1, "title": "`))
					w.(http.Flusher).Flush()
					hang(r, done)
				})
			},
			requests: 1,
		},
		{
			name: "a 502, then a retry that never answers",
			server: func(t *testing.T) (string, *atomic.Int64) {
				return hangingServer(t, func(w http.ResponseWriter, r *http.Request, n int64, done <-chan struct{}) {
					if n == 1 {
						w.WriteHeader(http.StatusBadGateway)
						return
					}
					hang(r, done)
				})
			},
			requests: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, requests := tt.server(t)
			s := &sleeper{}
			c, err := github.New(github.Options{
				BaseURL: url, Getenv: env("GITHUB_TOKEN", botToken), Timeout: timeout, Sleep: s.sleep,
			})
			if err != nil {
				t.Fatal(err)
			}
			// The test's own bound: without a timeout the call would hang.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			if tt.post {
				_, err = c.SetStatus(ctx, "php", "php-src", headSHA, github.Status{State: github.StateSuccess, Description: "ok"})
			} else {
				_, err = c.ResolvePR(ctx, "php", "php-src", 1)
			}
			took := time.Since(start)
			if ctx.Err() != nil {
				t.Fatalf("the call hung until the test gave up (%v): %v", took, err)
			}
			if !errors.Is(err, github.ErrTimeout) {
				t.Fatalf("error = %v, want ErrTimeout", err)
			}
			if took < timeout || took > 5*time.Second {
				t.Errorf("the call took %v, want about the %v timeout", took, timeout)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, timeout.String()) || strings.Contains(msg, botToken) {
				t.Errorf("error %q: want one line naming the timeout, without the token", msg)
			}
			if requests != nil && requests.Load() != tt.requests {
				t.Errorf("the server saw %d requests, want %d", requests.Load(), tt.requests)
			}
		})
	}
}
