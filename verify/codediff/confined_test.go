package codediff

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/confine"
	"github.com/patchproof/patchproof/internal/safefs/safefstest"
)

// TestMain runs CompareConfined's child, where this binary is one.
func TestMain(m *testing.M) {
	confine.Main(Jobs()...)
	os.Exit(m.Run())
}

// CompareConfined says that head's hostile object is head's (a failure of
// the target), and base's is a comparison that could not be made; good
// objects compare as in this process.
func TestCompareConfined(t *testing.T) {
	good := t.TempDir()
	buildTree(t, good, map[string]string{"m": fixture})
	obj := safefstest.Compile(t, fixture, append(phpCFLAGS, "-g", "-gz=zlib")...)
	rep, err := CompareConfined(t.Context(), good, good, Options{})
	if err != nil || !rep.AllIdentical() || rep.Compared < 5 {
		t.Fatalf("CompareConfined of one tree = %+v, %v; want all identical", rep, err)
	}
	bad := t.TempDir()
	hostiles[0].write(t, bad, obj)
	_, err = CompareConfined(t.Context(), good, bad, Options{})
	if !errors.Is(err, ErrHeadRejected) || !strings.Contains(err.Error(), "section .text") {
		t.Errorf("head's object: %v, want ErrHeadRejected naming .text", err)
	}
	_, err = CompareConfined(t.Context(), bad, good, Options{})
	if err == nil || errors.Is(err, ErrHeadRejected) || !strings.Contains(err.Error(), "section .text") {
		t.Errorf("base's object: %v, want an error that is not head's", err)
	}
}

// An object within the bounds that takes the parser past its child's
// limits (a function of 8 MiB, decoded in some 700 MiB, under a limit of
// 1.5 GiB of address space) is an error of the parent, which survives it:
// head's, where head's objects alone crash it again, and else not.
func TestCompareConfinedCrash(t *testing.T) {
	good := t.TempDir()
	buildTree(t, good, map[string]string{"m": fixture})
	obj := safefstest.Compile(t, fixture, phpCFLAGS...)
	big := hostile{name: "a function of 8 MiB", sparse: 10 << 20, craft: func(t *testing.T, obj []byte) []byte {
		return safefstest.SetSymbolSize(t, safefstest.SetSectionSize(t, obj, ".text", 9<<20), "spare", 8<<20)
	}}
	bad := t.TempDir()
	big.write(t, bad, obj)
	opt := Options{Limits: confine.Limits{AddressSpace: 3 << 29}}
	_, err := CompareConfined(t.Context(), good, bad, opt)
	var crash *confine.CrashError
	if !errors.Is(err, ErrHeadRejected) || !strings.Contains(err.Error(), "the object parser ran out of its 1536 MiB of address space") {
		t.Errorf("head's object: %v, want ErrHeadRejected of a crash", err)
	}
	_, err = CompareConfined(t.Context(), bad, good, opt)
	if errors.Is(err, ErrHeadRejected) || !errors.As(err, &crash) || !crash.OutOfMemory() {
		t.Errorf("base's object: %v, want a crash that is not head's", err)
	}
}
