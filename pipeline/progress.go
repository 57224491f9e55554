package pipeline

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/patchproof/patchproof/internal/ghactions"
	"github.com/patchproof/patchproof/pipeline/results"
)

// Progress shows what the run is doing: the current stage, its step and the
// elapsed time, one line per event, and a summary table at the end. Under
// GitHub Actions each stage is a log group and errors are annotations.
// What its lines quote may come from the tree under test (a build's
// failure, a PHP version, a backport's error): it goes through
// ghactions.Line, or a command's escapes, so that it starts no line and
// no command of its own and carries no ANSI escape or bidirectional
// control.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	start   time.Time
	stage   string
	stageAt time.Time
	actions bool
}

// NewProgress writes progress to w, with log groups and annotations when
// actions says it runs under GitHub Actions.
func NewProgress(w io.Writer, actions bool) *Progress {
	if w == nil {
		w = io.Discard
	}
	return &Progress{w: w, start: time.Now(), actions: actions}
}

func elapsed(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// StageStart announces a stage.
func (p *Progress) StageStart(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stage, p.stageAt = name, time.Now()
	if p.actions {
		fmt.Fprintf(p.w, "::group::%s\n", ghactions.Message(name))
	}
	fmt.Fprintf(p.w, "==> %s [%s]\n", ghactions.Line(name), elapsed(time.Since(p.start)))
}

// StageEnd closes a stage.
func (p *Progress) StageEnd(name string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	status := "done"
	if err != nil {
		status = firstLine(err.Error())
	}
	fmt.Fprintf(p.w, "<== %s: %s (%s)\n", ghactions.Line(name), ghactions.Line(status), elapsed(time.Since(p.stageAt)))
	if p.actions {
		fmt.Fprintln(p.w, "::endgroup::")
	}
}

// Step reports a step of the current stage, e.g. "base/nts: make -j1".
func (p *Progress) Step(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "    [%s %s] %s\n", ghactions.Line(p.stage), elapsed(time.Since(p.stageAt)), ghactions.Line(fmt.Sprintf(format, a...)))
}

// Warn shows a warning.
func (p *Progress) Warn(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.actions {
		fmt.Fprintf(p.w, "::warning::%s\n", ghactions.Message(msg))
		return
	}
	fmt.Fprintf(p.w, "    warning: %s\n", ghactions.Line(msg))
}

// Annotate emits a GitHub Actions error annotation at file:line (and nothing
// elsewhere: the message is in the logs and the report already).
func (p *Progress) Annotate(file string, line int, msg string) {
	if !p.actions {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "::error file=%s,line=%d::%s\n", ghactions.Property(file), line, ghactions.Message(msg))
}

// Summary prints one row per stage.
func (p *Progress) Summary(res *results.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w)
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tSTATUS\tTIME\tNOTE")
	for _, s := range res.Stages {
		note := s.Error
		if note == "" {
			note = s.Reason
		}
		d := "-"
		if s.StartedAt != nil {
			d = elapsed(time.Duration(s.DurationMS) * time.Millisecond)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ghactions.Line(s.Name), s.Status, d, ghactions.Line(firstLine(note)))
	}
	tw.Flush()
	fmt.Fprintf(p.w, "\nresult: %s (exit %d) in %s\n", res.Status, res.ExitCode, elapsed(time.Since(p.start)))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
