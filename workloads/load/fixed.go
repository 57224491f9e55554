package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// FixedOptions for [Fixed]. The zero value sends one request at a time over
// one kept-alive connection.
type FixedOptions struct {
	// Concurrency is the number of requests in flight.
	Concurrency int
	// Header is sent with every request.
	Header http.Header
	// Timeout bounds each request; zero means 30s.
	Timeout time.Duration
}

const defaultFixedTimeout = 30 * time.Second

// Fixed sends exactly n GET requests to url, reads every body and counts
// the statuses and transport errors the way wrk does: Requests counts
// completed responses, NonSuccess those not 2xx or 3xx, Errors the failed
// ones (Connect for dials, Timeout for timeouts, Read for the rest).
// Latency stays zero. Like [Run] it returns the Result with a
// *PassError when anything failed, and only ctx's error otherwise.
func Fixed(ctx context.Context, url string, n int, opts FixedOptions) (*Result, error) {
	conc := max(opts.Concurrency, 1)
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = defaultFixedTimeout
	}
	tr := &http.Transport{
		MaxIdleConnsPerHost: conc,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport: tr,
		Timeout:   timeout,
		// wrk does not follow redirects, and neither does a count of them.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	var (
		next       atomic.Int64
		mu         sync.Mutex
		r          = &Result{URL: url, Threads: conc, Connections: conc}
		start      = time.Now()
		g, gctx    = errgroup.WithContext(ctx)
		requestErr = func(err error) {
			mu.Lock()
			defer mu.Unlock()
			var ne net.Error
			var op *net.OpError
			switch {
			case errors.As(err, &op) && op.Op == "dial":
				r.Errors.Connect++
			case errors.As(err, &ne) && ne.Timeout():
				r.Errors.Timeout++
			default:
				r.Errors.Read++
			}
		}
	)
	for range conc {
		g.Go(func() error {
			for next.Add(1) <= int64(n) {
				req, err := http.NewRequestWithContext(gctx, http.MethodGet, url, nil)
				if err != nil {
					return err
				}
				for k, vs := range opts.Header {
					req.Header[k] = vs
				}
				resp, err := client.Do(req)
				if err != nil {
					if gctx.Err() != nil {
						return gctx.Err()
					}
					requestErr(err)
					continue
				}
				nb, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil {
					requestErr(err)
					continue
				}
				mu.Lock()
				r.Requests++
				r.ReadBytes += nb
				if resp.StatusCode < 200 || resp.StatusCode >= 400 {
					r.NonSuccess++
				}
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("load %s: %w", url, err)
	}
	r.Duration = time.Since(start)
	if s := r.Duration.Seconds(); s > 0 {
		r.RequestsPerSec = float64(r.Requests) / s
		r.TransferPerSec = float64(r.ReadBytes) / s
	}
	if n == 0 {
		return r, nil
	}
	return r, checkPass(url, false, r)
}
