package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/golden"
	"github.com/patchproof/patchproof/internal/side"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// known reads one of workloads/bench's known results, as results.json
// holds them: "known" is six passes of base and head whose statistics
// cost base 118× the lock calls and head nothing, "known-base" base alone
// over two passes.
func known(t *testing.T, name string) *Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "workloads", "bench", "testdata", name+".golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	// The check's part of results.json is the measurement's, field for
	// field: written again, it is the file read.
	again, err := json.MarshalIndent(&r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(b), string(again)+"\n"); d != "" {
		t.Fatalf("%s written again differs (-read +written):\n%s", name, d)
	}
	return &r
}

func TestWriteSection(t *testing.T) {
	for _, name := range []string{"markdown", "markdown-base"} {
		t.Run(name, func(t *testing.T) {
			r := known(t, map[string]string{"markdown": "known", "markdown-base": "known-base"}[name])
			var b bytes.Buffer
			if err := r.WriteSection(&b); err != nil {
				t.Fatal(err)
			}
			body, ok := strings.CutPrefix(b.String(), sectionTitle)
			if !ok {
				t.Fatalf("the section does not begin with its title %q:\n%s", sectionTitle, b.String())
			}
			golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(body))
		})
	}
}

// Each way the servers' crashes read.
func TestCrashesSection(t *testing.T) {
	r := known(t, "known")
	for _, c := range []struct {
		name       string
		base, head int
	}{
		{"none", 0, 0}, {"both", 18, 18}, {"head", 0, 2}, {"base", 18, 0}, {"more", 1, 18},
	} {
		t.Run(c.name, func(t *testing.T) {
			r.ServerCrashes = []*benchrun.ServerCrashes{{Build: side.Base, Servers: 18, Crashed: c.base}, {Build: side.Head, Servers: 18, Crashed: c.head}}
			for _, sc := range r.ServerCrashes {
				if sc.Crashed > 0 {
					sc.Signals = []string{"Segmentation fault (11)"}
				}
			}
			var b bytes.Buffer
			r.markdownCrashes(&b)
			golden.Check(t, filepath.Join("testdata", "crashes-"+c.name+".golden"), b.Bytes())
		})
	}
}
