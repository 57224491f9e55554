package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// runRecord is a live run as ClaimRun records it: what its processes are
// marked with, and where it writes.
type runRecord struct {
	Owner   string    `json:"owner"` // Owner.String(), the mark of its processes
	Out     string    `json:"out,omitempty"`
	Started time.Time `json:"started"`
}

// ClaimRun records this process in dir, the runs directory every run on
// this host shares (under the cache), as a live run writing to out, and
// stops what the runs recorded there that have died left running: every
// process carrying a dead run's mark is killed (Sweep) and its record
// removed. ClaimDir does the same for the run that used the same --out
// only, and a CI job's next run rarely does. A run whose process lives, or
// that another host recorded, is left alone; a dead run's mark, its start
// time in it, is never a live run's. release removes this run's record.
// Call it, like Sweep, when no command of this process runs.
func ClaimRun(dir, out string) (killed []int, release func(), err error) {
	release = func() {}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, release, fmt.Errorf("record the run in %s: %w", dir, err)
	}
	self := Self()
	path := filepath.Join(dir, fmt.Sprintf("%d-%d.json", self.PID, self.Start))
	rec, err := json.Marshal(runRecord{Owner: self.String(), Out: out, Started: time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return nil, release, err
	}
	if err := writeRecord(path, rec); err != nil {
		return nil, release, fmt.Errorf("record the run in %s: %w", dir, err)
	}
	release = func() { os.Remove(path) }

	records, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, release, err
	}
	var errs []error
	for _, p := range records {
		prev, ok := readRecord(p)
		if !ok || prev == self || !prev.Gone() {
			continue
		}
		k, err := Sweep(prev.String())
		killed = append(killed, k...)
		if err != nil {
			errs = append(errs, err)
			continue // its record stays, for the next run to try again
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return killed, release, errors.Join(errs...)
}

// writeRecord writes a record whole or not at all: a concurrent reader
// never sees half of one.
func writeRecord(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".record-")
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// readRecord reads the owner a run record names. A record that cannot be
// read is not ours to judge: ok is false and it is left as it is.
func readRecord(path string) (o Owner, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Owner{}, false
	}
	var rec runRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return Owner{}, false
	}
	o, err = ParseOwner(strings.TrimSpace(rec.Owner))
	return o, err == nil
}
