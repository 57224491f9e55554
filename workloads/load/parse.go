package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// A Result is what one wrk run reported.
type Result struct {
	URL         string
	Threads     int
	Connections int
	// Requests counts the responses that completed, whatever their status.
	Requests int64
	// Duration is how long the run took, to the microsecond.
	Duration time.Duration
	// ReadBytes is what was read from the server, headers included.
	ReadBytes      int64
	RequestsPerSec float64
	// TransferPerSec is ReadBytes per second.
	TransferPerSec float64
	Latency        Latency
	// NonSuccess counts responses whose status was not 2xx or 3xx.
	NonSuccess int64
	Errors     SocketErrors
}

// Latency is wrk's latency of completed requests.
type Latency struct {
	// Min, Max and Percentiles are whole microseconds, as wrk records them;
	// Avg and Stdev are wrk's, rounded to the nanosecond.
	Min, Avg, Stdev, Max time.Duration
	// Percentiles: 50, 75, 90, 99 and 99.9.
	Percentiles []Percentile
}

// A Percentile of the latency.
type Percentile struct {
	P     float64 // 50 for the median
	Value time.Duration
}

// SocketErrors are wrk's socket errors.
type SocketErrors struct {
	Connect, Read, Write, Timeout int64
}

// Total is the sum of all socket errors.
func (e SocketErrors) Total() int64 { return e.Connect + e.Read + e.Write + e.Timeout }

// Percentile returns the latency at percentile p and whether wrk reported it.
func (l Latency) Percentile(p float64) (time.Duration, bool) {
	for _, q := range l.Percentiles {
		if q.P == p {
			return q.Value, true
		}
	}
	return 0, false
}

// report is the line report.lua prints; its names are the script's.
type report struct {
	Requests   int64 `json:"requests"`
	DurationUS int64 `json:"duration_us"`
	Bytes      int64 `json:"bytes"`
	Errors     struct {
		Connect int64 `json:"connect"`
		Read    int64 `json:"read"`
		Write   int64 `json:"write"`
		Status  int64 `json:"status"`
		Timeout int64 `json:"timeout"`
	} `json:"errors"`
	LatencyUS struct {
		Min         int64   `json:"min"`
		Max         int64   `json:"max"`
		Mean        float64 `json:"mean"`
		Stdev       float64 `json:"stdev"`
		Percentiles []struct {
			P  float64 `json:"p"`
			US int64   `json:"us"`
		} `json:"percentiles"`
	} `json:"latency_us"`
}

// parseReport reads the JSON line report.lua prints after wrk's text
// report, which it ignores. wrk prints nothing after done(), and no line
// of its report opens an object, so the last line that does is the one.
func parseReport(out []byte) (*Result, error) {
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	var line []byte
	for i := len(lines) - 1; i >= 0; i-- {
		if bytes.HasPrefix(lines[i], []byte("{")) {
			line = lines[i]
			break
		}
	}
	if line == nil {
		return nil, errors.New("parse wrk output: no JSON line from the done() script")
	}
	var rep report
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("parse wrk output: %q: %w", line, err)
	}
	// wrk always runs for a while: an object without a duration is not
	// the script's.
	if rep.DurationUS <= 0 {
		return nil, fmt.Errorf("parse wrk output: %q: no duration", line)
	}
	r := &Result{
		Requests:   rep.Requests,
		Duration:   time.Duration(rep.DurationUS) * time.Microsecond,
		ReadBytes:  rep.Bytes,
		NonSuccess: rep.Errors.Status,
		Errors: SocketErrors{
			Connect: rep.Errors.Connect, Read: rep.Errors.Read,
			Write: rep.Errors.Write, Timeout: rep.Errors.Timeout,
		},
		Latency: Latency{
			Min:   time.Duration(rep.LatencyUS.Min) * time.Microsecond,
			Max:   time.Duration(rep.LatencyUS.Max) * time.Microsecond,
			Avg:   microseconds(rep.LatencyUS.Mean),
			Stdev: microseconds(rep.LatencyUS.Stdev),
		},
	}
	for _, p := range rep.LatencyUS.Percentiles {
		r.Latency.Percentiles = append(r.Latency.Percentiles, Percentile{P: p.P, Value: time.Duration(p.US) * time.Microsecond})
	}
	// wrk's own Requests/sec and Transfer/sec divide by the same runtime.
	s := r.Duration.Seconds()
	r.RequestsPerSec = float64(r.Requests) / s
	r.TransferPerSec = float64(r.ReadBytes) / s
	return r, nil
}

func microseconds(us float64) time.Duration {
	return time.Duration(math.Round(us * float64(time.Microsecond)))
}
