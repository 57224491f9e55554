package abi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/patchproof/patchproof/internal/confine"
	"github.com/patchproof/patchproof/internal/safefs"
)

// ErrHeadRejected is a comparison that head's build kept from being made:
// a binary or object beyond the bounds a build's files are read within
// (safefs.Limits), DWARF types no compiler writes (ErrTypeGraph), or a
// file that takes the reader past its child's limits (internal/confine).
// The change's build made them, so it is a failure of the target's check
// (Result.Rejected), not a comparison that could not run.
var ErrHeadRejected = errors.New("head's build rejected")

// Jobs are the confined jobs of CompareConfined: a binary that calls it
// gives them to confine.Main.
func Jobs() []confine.Job { return []confine.Job{compareJob(), readJob()} }

func compareJob() confine.Job {
	return confine.Job{Name: "abi.compare", What: "the DWARF and symbol reader", Run: runCompare}
}

func readJob() confine.Job {
	return confine.Job{Name: "abi.read", What: "the DWARF and symbol reader", Run: runRead}
}

type compareIn struct {
	Variant    string
	Base, Head Input
}

type compareOut struct {
	Variant *Variant
	// HeadRejected says that the error is head's build's, beyond the
	// reader's bounds: an error loses its type on its way out.
	HeadRejected bool
}

func runCompare(in []byte) (any, error) {
	var c compareIn
	if err := json.Unmarshal(in, &c); err != nil {
		return nil, err
	}
	v, err := Compare(c.Variant, c.Base, c.Head)
	var he *headError
	return compareOut{Variant: v, HeadRejected: errors.As(err, &he) && beyondBounds(err)}, err
}

// beyondBounds says whether err is a file's beyond what the reader reads.
func beyondBounds(err error) bool {
	return errors.Is(err, safefs.ErrTooLarge) || errors.Is(err, ErrTypeGraph)
}

func runRead(in []byte) (any, error) {
	var i Input
	if err := json.Unmarshal(in, &i); err != nil {
		return nil, err
	}
	_, err := read(i)
	return confine.Rejection{Rejected: beyondBounds(err)}, err
}

// CompareConfined is Compare in a child process under lim (internal/confine):
// no file of a build, however made, takes patchproof past them. An error
// wrapping ErrHeadRejected is head's build's doing: a file beyond the
// reader's bounds, or a crash of the child that reading head's build
// alone repeats. Any other error, a crash on base's build included, is a
// comparison that could not be made.
func CompareConfined(ctx context.Context, variant string, base, head Input, lim confine.Limits) (*Variant, error) {
	var out compareOut
	err := confine.Run(ctx, compareJob(), lim, compareIn{Variant: variant, Base: base, Head: head}, &out)
	if err == nil {
		return out.Variant, nil
	}
	fault, err := confine.Blame(ctx, err, out.HeadRejected, readJob(), lim, head)
	if fault {
		return nil, fmt.Errorf("%w: compare %s ABI: %v", ErrHeadRejected, variant, err)
	}
	var crash *confine.CrashError
	if !errors.As(err, &crash) {
		return nil, err
	}
	return nil, fmt.Errorf("compare %s ABI: %w", variant, err)
}
