package pipeline

import (
	"os"
	"testing"

	"github.com/patchproof/patchproof/internal/confine"
)

// TestMain runs the checks' confined parsers, where this binary is their
// child.
func TestMain(m *testing.M) {
	confine.Main(ConfinedJobs()...)
	os.Exit(m.Run())
}
