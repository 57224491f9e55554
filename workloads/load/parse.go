package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A Result is what one wrk run reported.
type Result struct {
	URL         string
	Threads     int
	Connections int
	// Requests counts the responses that completed, whatever their status.
	Requests int64
	// Duration is how long the run took, to wrk's two decimals.
	Duration time.Duration
	// ReadBytes is what wrk read, rounded by wrk to two decimals of its
	// unit (KB, MB: powers of 1024).
	ReadBytes      float64
	RequestsPerSec float64
	// TransferPerSec is bytes read per second, rounded like ReadBytes.
	TransferPerSec float64
	Latency        Latency
	// ThreadRate is the distribution of requests per second per thread.
	ThreadRate Stat
	// NonSuccess counts responses whose status was not 2xx or 3xx.
	NonSuccess int64
	Errors     SocketErrors
}

// Latency is wrk's latency of completed requests.
type Latency struct {
	Avg, Stdev, Max time.Duration
	// WithinStdev is the percentage of requests within one standard
	// deviation of the mean; NaN when nothing completed.
	WithinStdev float64
	// Percentiles, from --latency: 50, 75, 90 and 99.
	Percentiles []Percentile
}

// A Percentile of the latency.
type Percentile struct {
	P     float64 // 50 for the median
	Value time.Duration
}

// A Stat is one of wrk's "Thread Stats" rows.
type Stat struct {
	Avg, Stdev, Max float64
	WithinStdev     float64 // per cent; NaN when nothing completed
}

// SocketErrors are wrk's "Socket errors" line.
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

// Parse reads wrk's report. Lines it does not know, such as what a Lua
// script prints, are skipped; a report without its request count or its
// Requests/sec line is an error.
func Parse(out []byte) (*Result, error) {
	r := &Result{}
	var haveRequests, haveRate bool
	inDistribution := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var err error
		switch {
		case strings.HasPrefix(line, "Running ") && len(f) >= 5 && f[3] == "@":
			r.URL = f[4]
		case len(f) == 5 && f[1] == "threads" && f[2] == "and" && f[4] == "connections":
			r.Threads, err = strconv.Atoi(f[0])
			if err == nil {
				r.Connections, err = strconv.Atoi(f[3])
			}
		case f[0] == "Latency" && len(f) == 5:
			err = parseLatencyStats(f[1:], &r.Latency)
		case f[0] == "Req/Sec" && len(f) == 5:
			r.ThreadRate, err = parseRateStats(f[1:])
		case line == "Latency Distribution":
			inDistribution = true
			continue
		case inDistribution && len(f) == 2 && strings.HasSuffix(f[0], "%"):
			var q Percentile
			if q.P, err = strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64); err == nil {
				q.Value, err = parseTime(f[1])
			}
			if err != nil {
				return nil, fmt.Errorf("parse wrk output: %q: %w", line, err)
			}
			r.Latency.Percentiles = append(r.Latency.Percentiles, q)
			continue
		case len(f) == 6 && f[1] == "requests" && f[2] == "in" && f[5] == "read":
			// "88908 requests in 2.00s, 53.42MB read"
			haveRequests = true
			if r.Requests, err = strconv.ParseInt(f[0], 10, 64); err == nil {
				if r.Duration, err = parseTime(strings.TrimSuffix(f[3], ",")); err == nil {
					r.ReadBytes, err = parseBytes(f[4])
				}
			}
		case strings.HasPrefix(line, "Socket errors:"):
			_, err = fmt.Sscanf(line, "Socket errors: connect %d, read %d, write %d, timeout %d",
				&r.Errors.Connect, &r.Errors.Read, &r.Errors.Write, &r.Errors.Timeout)
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			r.NonSuccess, err = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "Non-2xx or 3xx responses:")), 10, 64)
		case f[0] == "Requests/sec:" && len(f) == 2:
			haveRate = true
			r.RequestsPerSec, err = strconv.ParseFloat(f[1], 64)
		case f[0] == "Transfer/sec:" && len(f) == 2:
			r.TransferPerSec, err = parseBytes(f[1])
		}
		if err != nil {
			return nil, fmt.Errorf("parse wrk output: %q: %w", line, err)
		}
		inDistribution = false
	}
	if !haveRequests || !haveRate {
		return nil, errors.New("parse wrk output: no request count or rate")
	}
	return r, nil
}

func parseLatencyStats(f []string, l *Latency) error {
	var err error
	if l.Avg, err = parseTime(f[0]); err != nil {
		return err
	}
	if l.Stdev, err = parseTime(f[1]); err != nil {
		return err
	}
	if l.Max, err = parseTime(f[2]); err != nil {
		return err
	}
	l.WithinStdev, err = parsePercent(f[3])
	return err
}

func parseRateStats(f []string) (Stat, error) {
	var s Stat
	var err error
	for i, p := range []*float64{&s.Avg, &s.Stdev, &s.Max} {
		if *p, err = parseScaled(f[i], metricUnits, 1000); err != nil {
			return s, err
		}
	}
	s.WithinStdev, err = parsePercent(f[3])
	return s, err
}

// parsePercent reads "93.69%", or wrk's "-nan%" when nothing completed.
func parsePercent(s string) (float64, error) {
	v := strings.TrimSuffix(s, "%")
	if v == s {
		return 0, fmt.Errorf("%q is not a percentage", s)
	}
	if strings.TrimLeft(v, "+-") == "nan" {
		return math.NaN(), nil
	}
	return strconv.ParseFloat(v, 64)
}

// wrk prints times in us, ms, s, then m and h, with two decimals.
var timeUnits = []struct {
	suffix string
	unit   time.Duration
}{
	{"us", time.Microsecond},
	{"ms", time.Millisecond},
	{"s", time.Second},
	{"m", time.Minute},
	{"h", time.Hour},
}

func parseTime(s string) (time.Duration, error) {
	for _, u := range timeUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("time %q: %w", s, err)
			}
			return time.Duration(math.Round(v * float64(u.unit))), nil
		}
	}
	return 0, fmt.Errorf("time %q: unknown unit", s)
}

var (
	binaryUnits = []string{"", "K", "M", "G", "T", "P"}
	metricUnits = []string{"", "k", "M", "G", "T", "P"}
)

// parseBytes reads wrk's "53.42MB": powers of 1024.
func parseBytes(s string) (float64, error) {
	num, ok := strings.CutSuffix(s, "B")
	if !ok {
		return 0, fmt.Errorf("size %q: no B", s)
	}
	return parseScaled(num, binaryUnits, 1024)
}

// parseScaled reads a number with one of the unit prefixes, each base
// times the one before.
func parseScaled(s string, prefixes []string, base float64) (float64, error) {
	scale := 1.0
	num := s
	for i := len(prefixes) - 1; i > 0; i-- {
		if n, ok := strings.CutSuffix(s, prefixes[i]); ok {
			num, scale = n, math.Pow(base, float64(i))
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("number %q: %w", s, err)
	}
	return v * scale, nil
}
