package codediff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/patchproof/patchproof/internal/confine"
	"github.com/patchproof/patchproof/internal/safefs"
)

// ErrHeadRejected is a comparison that head's objects kept from being
// made: an object beyond the bounds a build's files are read within
// (safefs.Limits), or one that takes the parser past its child's limits
// (internal/confine). The change's build made them, so it is a failure
// of the target's check (Result.Rejected), not a comparison that could
// not run.
var ErrHeadRejected = errors.New("head's objects rejected")

// Jobs are the confined jobs of CompareConfined: a binary that calls it
// gives them to confine.Main.
func Jobs() []confine.Job { return []confine.Job{compareJob(), loadJob()} }

func compareJob() confine.Job {
	return confine.Job{Name: "codediff.compare", What: "the object parser", Run: runCompare}
}

func loadJob() confine.Job {
	return confine.Job{Name: "codediff.load", What: "the object parser", Run: runLoad}
}

type compareIn struct {
	Base, Head string
	Options    Options
}

type compareOut struct {
	Report *Report
	// HeadRejected says that the error is head's objects' beyond
	// safefs's bounds: an error loses its type on its way out.
	HeadRejected bool
}

func runCompare(in []byte) (any, error) {
	var c compareIn
	if err := json.Unmarshal(in, &c); err != nil {
		return nil, err
	}
	rep, err := CompareDirs(c.Base, c.Head, c.Options)
	var he *headError
	return compareOut{Report: rep, HeadRejected: errors.As(err, &he) && errors.Is(err, safefs.ErrTooLarge)}, err
}

type loadIn struct{ Dir, Pattern string }

func runLoad(in []byte) (any, error) {
	var l loadIn
	if err := json.Unmarshal(in, &l); err != nil {
		return nil, err
	}
	_, err := loadSide(l.Dir, l.Pattern)
	return confine.Rejection{Rejected: errors.Is(err, safefs.ErrTooLarge)}, err
}

// CompareConfined is CompareDirs in a child process under limits of
// memory and CPU (internal/confine): no object, however made, takes
// patchproof past them. An error wrapping ErrHeadRejected is head's
// objects' doing: one beyond safefs's bounds, or a crash of the child
// that reading head's objects alone repeats. Any other error, a crash on
// base's objects included, is a comparison that could not be made.
func CompareConfined(ctx context.Context, baseDir, headDir string, opt Options) (*Report, error) {
	var out compareOut
	err := confine.Run(ctx, compareJob(), opt.Limits, compareIn{Base: baseDir, Head: headDir, Options: opt}, &out)
	if err == nil {
		return out.Report, nil
	}
	fault, err := confine.Blame(ctx, err, out.HeadRejected, loadJob(), opt.Limits, loadIn{Dir: headDir, Pattern: opt.objects()})
	if fault {
		return nil, fmt.Errorf("%w: %v", ErrHeadRejected, err)
	}
	var crash *confine.CrashError
	if !errors.As(err, &crash) {
		return nil, err
	}
	return nil, fmt.Errorf("codediff: compare %s with %s: %w", baseDir, headDir, err)
}
