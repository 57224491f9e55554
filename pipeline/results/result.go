package results

import (
	"strings"
	"time"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/verify/abi"
	"github.com/patchproof/patchproof/verify/bench"
	"github.com/patchproof/patchproof/verify/codediff"
	"github.com/patchproof/patchproof/verify/modules"
	"github.com/patchproof/patchproof/verify/race"
	"github.com/patchproof/patchproof/verify/suites"
	"github.com/patchproof/patchproof/verify/verdict"
)

// SchemaVersion is the version of results.json's format that this code
// writes: results.schema.json describes it. Fields are added within a
// version, never renamed; a change that breaks readers makes a new one.
const SchemaVersion = 1

// Result is what a run found: results.json.
type Result struct {
	// SchemaVersion is SchemaVersion when written. Files older than it,
	// without one, are not read (Read).
	SchemaVersion int             `json:"schema_version"`
	Tool          string          `json:"tool"`
	Version       string          `json:"version"`
	StartedAt     time.Time       `json:"started_at"`
	FinishedAt    *time.Time      `json:"finished_at,omitempty"`
	Status        Status          `json:"status"`
	ExitCode      int             `json:"exit_code"`
	Error         string          `json:"error,omitempty"`
	Settings      Settings        `json:"settings"`
	Machine       Machine         `json:"machine"`
	Targets       []*TargetResult `json:"targets"`
	Stages        []*StageResult  `json:"stages"`
	Warnings      []string        `json:"warnings,omitempty"`
	RunURL        string          `json:"run_url,omitempty"`
}

// Status is the outcome of a run or a stage: verify/verdict's, the one
// vocabulary of every check.
type Status = verdict.Status

// The statuses, by their results.json names.
const (
	StatusRunning      = verdict.Running
	StatusPassed       = verdict.Passed
	StatusFailed       = verdict.Failed
	StatusError        = verdict.Error
	StatusSkipped      = verdict.Skipped
	StatusNotAvailable = verdict.NotAvailable
	StatusPending      = verdict.Pending
	StatusInterrupted  = verdict.Interrupted
	StatusIncomplete   = verdict.Incomplete
)

// Settings are the run's inputs worth showing next to its numbers.
type Settings struct {
	Repo     string   `json:"repo"`
	PR       int      `json:"pr,omitempty"`
	Demo     bool     `json:"demo"`
	Variants []string `json:"variants"`
	Builder  string   `json:"builder"`
	Profile  string   `json:"profile"`
	// ProfileText says what the profile configures.
	ProfileText   string   `json:"profile_text,omitempty"`
	Jobs          int      `json:"jobs"`
	Stages        []string `json:"stages"`
	ExpectNTSNoop bool     `json:"expect_nts_noop"`
	// ABI is --abi: what an ABI break does to a stable branch's target;
	// empty in files older than it (fail).
	ABI string `json:"abi,omitempty"`
	// Flags are the settings given on the command line, as --name=value
	// by name, all but those that name the source, the target
	// and where the run's output goes: what a rerun repeats. Absent in
	// files older than it, whose rerun repeats only the fields above.
	Flags []string `json:"flags,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	Hostname string `json:"hostname"`
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	OS       string `json:"os,omitempty"`
}

// The stages' names, as results.json records them (StageResult.Name,
// Settings.Stages) and --stages takes them. Each is the String of one
// stage of pipeline's stage list, which orders them; nothing else spells
// one. The checkout is the one stage that checks nothing itself: the
// verdict and the report treat it apart (IsCheck).
const (
	StageCheckout = "checkout"
	StageBuild    = "build"
	StageCodeDiff = "codediff"
	StageABI      = "abi"
	StageTests    = "tests"
	StageRace     = "race"
	StageBench    = "bench"
	StageModules  = "modules"
)

// StageResult is one stage's outcome.
type StageResult struct {
	Name       string     `json:"name"`
	Status     Status     `json:"status"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	DurationMS int64      `json:"duration_ms"`
	Error      string     `json:"error,omitempty"`
	// Message is what the stage has to say in one line: a failed check's
	// message (a *CheckError's), or the first line of what kept it from
	// running. The report shows it; Error keeps the whole text.
	Message  string   `json:"message,omitempty"`
	Reason   string   `json:"reason,omitempty"` // why it was skipped
	Warnings []string `json:"warnings,omitempty"`
	Log      string   `json:"log,omitempty"`
}

// Note is the stage's message, or for a results.json written before
// messages were recorded, the first line of its error.
func (s *StageResult) Note() string {
	if s.Message != "" || s.Error == "" {
		return s.Message
	}
	line, _, _ := strings.Cut(s.Error, "\n")
	return line
}

// TargetResult is what was found for one target (master, PHP-8.4, ...):
// its commits, then each stage's part, nil where the stage did not run.
type TargetResult struct {
	Name     string            `json:"name"`
	Repo     string            `json:"repo"`
	Base     CommitRef         `json:"base"`
	Head     CommitRef         `json:"head"`
	Trees    Trees             `json:"trees"`
	Builds   []*builders.Build `json:"builds,omitempty"`
	CodeDiff *codediff.Result  `json:"codediff,omitempty"`
	Backport *BackportResult   `json:"backport,omitempty"`
	Tests    *suites.Result    `json:"tests,omitempty"`
	Bench    *bench.Result     `json:"bench,omitempty"`
	Race     *race.Result      `json:"race,omitempty"`
	ABI      *abi.Result       `json:"abi,omitempty"`
	Modules  *modules.Result   `json:"modules,omitempty"`
	Errors   []string          `json:"errors,omitempty"`
}

// A Check is a stage's part of a target's results as the report walks
// them: the stage that makes it, and its Result: a verify package's
// result, which also says what the check is where the stage did not run
// on the target (a nil pointer, whose methods answer all the same), or
// the builds.
type Check struct {
	Stage  string
	Result any
}

// Checks are t's parts, in the order the report shows them: the machine
// code and the ABI first, what the change is, then the builds and the
// checks that run them. A check is a field of TargetResult above and a
// line here.
func (t *TargetResult) Checks() []Check {
	return []Check{
		{StageCodeDiff, t.CodeDiff},
		{StageABI, t.ABI},
		{StageBuild, t.Builds},
		{StageModules, t.Modules},
		{StageTests, t.Tests},
		{StageRace, t.Race},
		{StageBench, t.Bench},
	}
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
