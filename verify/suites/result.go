// Package suites judges runs of PHP's own test suites (run-tests.php) on two
// builds of the same change, the test-suite check's one home: it owns the
// check's part of results.json (Result: every build's runs and base vs head
// per variant), the test-by-test comparison of base and head, the re-runs
// that tell a regression from a flake, the guard that refuses a run in which
// the tests did not really run (the database was unreachable, most tests
// skipped), Judge, which applies the check's rules, and the check's cell
// and section of the report.
//
// Running the suites is workloads/phptests' job; this package only reads
// what it produced.
package suites

import "github.com/patchproof/patchproof/workloads/phptests"

// The suites' samples are what workloads/phptests measured; this package
// judges them, under the names its rules and results.json use.
type (
	Outcome    = phptests.Outcome
	TestResult = phptests.TestResult
	Counts     = phptests.Counts
	SuiteRun   = phptests.SuiteRun
	RunResult  = phptests.RunResult
)

// The outcomes, as run-tests.php names them in lower case.
const (
	Pass  = phptests.Pass
	Fail  = phptests.Fail
	Skip  = phptests.Skip
	XFail = phptests.XFail
	Bork  = phptests.Bork
	Leak  = phptests.Leak
	XLeak = phptests.XLeak
	Warn  = phptests.Warn
)

// Outcomes lists every outcome this version writes, in the order of the
// results schema's enum.
var Outcomes = phptests.Outcomes
