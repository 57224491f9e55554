package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/workloads/bench"
)

// Result is what a run found: results.json. Field names are a published
// interface: add fields, never rename them.
type Result struct {
	Tool       string          `json:"tool"`
	Version    string          `json:"version"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
	Status     Status          `json:"status"`
	ExitCode   int             `json:"exit_code"`
	Error      string          `json:"error,omitempty"`
	Settings   Settings        `json:"settings"`
	Machine    Machine         `json:"machine"`
	Targets    []*TargetResult `json:"targets"`
	Stages     []*StageResult  `json:"stages"`
	Warnings   []string        `json:"warnings,omitempty"`
	RunURL     string          `json:"run_url,omitempty"`
}

// Status is the outcome of a run or a stage.
type Status string

const (
	StatusRunning      Status = "running"
	StatusPassed       Status = "passed"
	StatusFailed       Status = "failed"  // ran, and a check failed
	StatusError        Status = "error"   // could not run
	StatusSkipped      Status = "skipped" // not selected, or nothing to do
	StatusNotAvailable Status = "not-available"
)

// Settings are the run's inputs worth showing next to its numbers.
type Settings struct {
	Repo          string   `json:"repo"`
	PR            int      `json:"pr,omitempty"`
	Demo          bool     `json:"demo"`
	Variants      []string `json:"variants"`
	Builder       string   `json:"builder"`
	Profile       string   `json:"profile"`
	Jobs          int      `json:"jobs"`
	Stages        []string `json:"stages"`
	ExpectNTSNoop bool     `json:"expect_nts_noop"`
}

// Machine describes where the run happened.
type Machine struct {
	Hostname string `json:"hostname"`
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	OS       string `json:"os,omitempty"`
}

// StageResult is one stage's outcome.
type StageResult struct {
	Name       string     `json:"name"`
	Status     Status     `json:"status"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	DurationMS int64      `json:"duration_ms"`
	Error      string     `json:"error,omitempty"`
	Reason     string     `json:"reason,omitempty"` // why it was skipped
	Warnings   []string   `json:"warnings,omitempty"`
	Log        string     `json:"log,omitempty"`
}

// TargetResult is what was found for one target (master, PHP-8.4, ...).
type TargetResult struct {
	Name     string            `json:"name"`
	Repo     string            `json:"repo"`
	Base     CommitRef         `json:"base"`
	Head     CommitRef         `json:"head"`
	Trees    Trees             `json:"trees"`
	Builds   []*builders.Build `json:"builds,omitempty"`
	CodeDiff *CodeDiffResult   `json:"codediff,omitempty"`
	Backport *BackportResult   `json:"backport,omitempty"`
	Tests    *TestsResult      `json:"tests,omitempty"`
	Bench    *bench.Result     `json:"bench,omitempty"`
	Errors   []string          `json:"errors,omitempty"`
}

// CommitRef names a commit and how it was chosen.
type CommitRef struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
	Tree   string `json:"tree,omitempty"` // git tree hash: the identity of the source
	// For the base: the base branch's tip, and whether the base commit is the
	// merge-base of the head and that tip rather than the tip itself.
	BranchTip   string `json:"branch_tip,omitempty"`
	IsMergeBase bool   `json:"is_merge_base,omitempty"`
	Subject     string `json:"subject,omitempty"`
}

// Trees are the exported source trees of a target.
type Trees struct {
	Base string `json:"base,omitempty"`
	Head string `json:"head,omitempty"`
}

// resultFile writes a Result atomically after every change, so a crash keeps
// what finished.
type resultFile struct {
	mu   sync.Mutex
	path string
	res  *Result
}

func (f *resultFile) update(change func(*Result)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if change != nil {
		change(f.res)
	}
	return writeJSON(f.path, f.res)
}

// writeJSON writes v to path through a temporary file and a rename.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// ReadResult reads a results.json.
func ReadResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &r, nil
}
