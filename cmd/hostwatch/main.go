// Command hostwatch samples /proc until it is stopped (SIGINT or SIGTERM)
// and writes, as JSON, every process that executed code from the given
// directories, this host's apart from containers'. scripts/test runs it
// around the Docker-mode demo run: the builds' code must have run in
// containers only.
//
//	hostwatch -out report.json -interval 50ms DIR...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/patchproof/patchproof/internal/hostwatch"
)

func main() {
	out := flag.String("out", "", "where the JSON report goes (required)")
	interval := flag.Duration("interval", 50*time.Millisecond, "time between two scans of /proc")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 || *interval <= 0 {
		fmt.Fprintln(os.Stderr, "usage: hostwatch -out FILE [-interval D] DIR...")
		os.Exit(2)
	}
	var r hostwatch.Report
	for _, d := range flag.Args() {
		abs, err := filepath.Abs(d)
		if err != nil {
			fmt.Fprintf(os.Stderr, "hostwatch: %s: %v\n", d, err)
			os.Exit(2)
		}
		r.Roots = append(r.Roots, abs)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for done := false; !done; {
		r.Add(hostwatch.Scan(r.Roots))
		select {
		case <-stop:
			done = true
		case <-tick.C:
		}
	}
	data, err := json.MarshalIndent(&r, "", "  ")
	if err == nil {
		// Written whole or not at all: a reader never sees half a report.
		tmp := *out + ".tmp"
		if err = os.WriteFile(tmp, append(data, '\n'), 0o644); err == nil {
			err = os.Rename(tmp, *out)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "hostwatch: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "hostwatch: "+r.String())
}
