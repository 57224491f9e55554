package github_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/patchproof/patchproof/pipeline/github"
)

// prJSON is php/php-src#1 as GitHub answers it, of n bytes: its title
// makes up the length, which the decoder must read to its end.
func prJSON(n int) string {
	head := `{"number":1,"state":"open","head":{"ref":"atomic-stats","sha":"` + headSHA + `"},"base":{"ref":"master","sha":"` + baseSHA + `"},"title":"`
	return head + strings.Repeat("x", max(0, n-len(head)-2)) + `"}`
}

// endless writes start, then chunk after chunk until the client hangs up,
// counting what it wrote.
func endless(w http.ResponseWriter, r *http.Request, status int, start string, written *atomic.Int64) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	n, _ := w.Write([]byte(start))
	written.Add(int64(n))
	chunk := []byte(strings.Repeat("x", 64<<10))
	for r.Context().Err() == nil {
		n, err := w.Write(chunk)
		written.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// An answer longer than Options.MaxResponse fails the call once that
// much has been read, naming the request, whatever the server would go on
// sending: memory stays bounded.
func TestMaxResponse(t *testing.T) {
	const limit = 1 << 20
	tests := []struct {
		name    string
		max     int64 // Options.MaxResponse
		answer  func(w http.ResponseWriter, r *http.Request, written *atomic.Int64)
		wantErr string // "" for none; "too large" for ErrResponseTooLarge
		// wantWritten bounds what the server got to write: the limit and
		// what the connection's buffers took.
		wantWritten int64
	}{
		{"an endless body", limit, func(w http.ResponseWriter, r *http.Request, written *atomic.Int64) {
			endless(w, r, http.StatusOK, `{"number":1,"title":"`, written)
		}, "too large", 0},
		{"an endless body, the default bound", 0, func(w http.ResponseWriter, r *http.Request, written *atomic.Int64) {
			endless(w, r, http.StatusOK, `{"number":1,"title":"`, written)
		}, "too large", 0},
		{"a body of 3 GB by its Content-Length, refused unread", limit, func(w http.ResponseWriter, r *http.Request, written *atomic.Int64) {
			w.Header().Set("Content-Length", strconv.Itoa(3<<30))
			endless(w, r, http.StatusOK, `{"number":1,"title":"`, written)
		}, "too large", 0},
		{"an endless server error, retried", limit, func(w http.ResponseWriter, r *http.Request, written *atomic.Int64) {
			endless(w, r, http.StatusBadGateway, `{"message":"`, written)
		}, "HTTP 502", 0},
		{"a body of exactly the bound", limit, func(w http.ResponseWriter, r *http.Request, written *atomic.Int64) {
			w.Write([]byte(prJSON(limit)))
		}, "", limit},
		{"one byte more", limit, func(w http.ResponseWriter, r *http.Request, written *atomic.Int64) {
			w.Write([]byte(prJSON(limit + 1)))
		}, "too large", limit + 1},
		{"no bound", -1, func(w http.ResponseWriter, r *http.Request, written *atomic.Int64) {
			w.Write([]byte(prJSON(github.DefaultMaxResponse + 1)))
		}, "", github.DefaultMaxResponse + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var written, active atomic.Int64
			url, _ := hangingServer(t, func(w http.ResponseWriter, r *http.Request, n int64, done <-chan struct{}) {
				active.Add(1)
				defer active.Add(-1)
				tt.answer(w, r, &written)
			})
			// A timeout far off: without the bound, the endless bodies
			// would be read until it, into memory.
			c, _ := newClient(t, nil, botToken, github.Options{BaseURL: url, MaxResponse: tt.max, Timeout: time.Minute})
			bound := tt.max
			if bound == 0 {
				bound = github.DefaultMaxResponse
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			pr, err := c.ResolvePR(context.Background(), "php", "php-src", 1)
			runtime.ReadMemStats(&after)

			switch tt.wantErr {
			case "":
				if err != nil || pr.HeadSHA != headSHA {
					t.Fatalf("ResolvePR = %+v, %v; want the PR", pr, err)
				}
			case "too large":
				if !errors.Is(err, github.ErrResponseTooLarge) {
					t.Fatalf("ResolvePR = %+v, %v; want ErrResponseTooLarge", pr, err)
				}
				if msg := err.Error(); !strings.Contains(msg, url+"api/v3/repos/php/php-src/pulls/1") ||
					!strings.Contains(msg, "longer than "+strconv.FormatInt(bound, 10)+" bytes") {
					t.Errorf("error %q: want it to name the request and the bound", msg)
				}
			default:
				if kind := errKind(err); kind != tt.wantErr {
					t.Fatalf("ResolvePR: %v is %q, want %q", err, kind, tt.wantErr)
				}
			}
			if tt.max >= 0 {
				// What was allocated while reading: the body up to the
				// bound, decoded, with room for the decoder's buffers and
				// each retry of a server error; without the bound, what
				// the server sends in a minute.
				if got := int64(after.TotalAlloc - before.TotalAlloc); got > 32*bound {
					t.Errorf("allocated %d bytes reading answers bounded to %d", got, bound)
				}
			}
			if tt.wantWritten > 0 && written.Load() > tt.wantWritten {
				t.Errorf("the server wrote %d bytes, want at most %d", written.Load(), tt.wantWritten)
			}
			// Every answer cut short was closed, ending its connection,
			// rather than left open until its timeout.
			for deadline := time.Now().Add(10 * time.Second); active.Load() != 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d answers still being sent 10s after the call returned", active.Load())
				}
			}
		})
	}
}

// A page of the longest comments anyone who may comment can write, of
// the characters JSON escapes longest, lists within the default bound:
// they cannot keep patchproof from posting.
func TestCommentsPageFits(t *testing.T) {
	f := newFake(t)
	longest := strings.Repeat("\x01", 65536)
	for range 100 {
		f.AddComment("php", "php-src", 1, "mallory", longest)
	}
	f.AddComment("php", "php-src", 1, bot, body("summary", "1", "ours"))
	c, _ := newClient(t, f, botToken, github.Options{})
	got, err := c.UpsertComment(context.Background(), "php", "php-src", 1, github.Comment{Key: "summary", Run: "2", Body: "updated"})
	if err != nil || got.Action != github.Updated {
		t.Fatalf("UpsertComment = %+v, %v; want the comment updated", got, err)
	}
}
