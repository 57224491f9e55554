package bench

import benchrun "github.com/patchproof/patchproof/workloads/bench"

// Result is the benchmark check's part of results.json ("bench" of a
// target): what workloads/bench measured, its fields inline, so that the
// file reads as it always has. Names are a published interface; add
// fields, never rename them.
type Result struct {
	benchrun.Result
}
