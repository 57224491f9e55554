package results_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/pipeline/results"
)

// Read refuses a results.json of a format it does not know rather than
// read a newer format's fields as its own, and one that names no format:
// whatever wrote it, it was not a patchproof that versions its results.
func TestReadSchemaVersion(t *testing.T) {
	for _, tt := range []struct {
		name    string
		json    string
		refused bool
		version int  // the version refused
		missing bool // refused for naming none
	}{
		{name: "this version", json: `{"schema_version": 1, "tool": "patchproof"}`},
		{name: "a newer version", json: `{"schema_version": 99, "tool": "patchproof"}`, refused: true, version: 99},
		// A newer format may change a field's type: the version is told
		// first, not the type.
		{name: "a newer version of other types", json: `{"schema_version": 2, "tool": "patchproof", "targets": {"master": {}}}`, refused: true, version: 2},
		{name: "a negative version", json: `{"schema_version": -1, "tool": "patchproof"}`, refused: true, version: -1},
		// 0 is no version patchproof wrote: the field's zero value.
		{name: "version 0", json: `{"schema_version": 0, "tool": "patchproof"}`, refused: true, version: 0},
		{name: "no version", json: `{"tool": "patchproof", "status": "passed"}`, refused: true, missing: true},
		{name: "a null version", json: `{"schema_version": null, "tool": "patchproof"}`, refused: true, missing: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.json")
			if err := os.WriteFile(path, []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := results.Read(path)
			if !tt.refused {
				if err != nil || res.Tool != "patchproof" {
					t.Fatalf("Read: %+v, %v; want it read", res, err)
				}
				return
			}
			var ve *results.VersionError
			if !errors.As(err, &ve) || ve.Version != tt.version || ve.Missing != tt.missing {
				t.Fatalf("Read: %+v, %v; want a *VersionError of version %d (missing %v)", res, err, tt.version, tt.missing)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "schema_version") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s and schema_version", msg, path)
			}
			if res != nil {
				t.Errorf("Read returned a result with its error: %+v", res)
			}
		})
	}
}

// Read reads at most MaxFileBytes: a larger file, which no run writes, is
// refused naming the file and the bound, without reading it whole.
func TestReadBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size without the disk.
	if err := f.Truncate(results.MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res, err := results.Read(path)
	var se *results.SizeError
	if !errors.As(err, &se) || se.Max != results.MaxFileBytes {
		t.Fatalf("Read: %+v, %v; want a *SizeError", res, err)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "64 MiB") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming %s and the bound", msg, path)
	}
	// At the bound it is read (and then is not JSON).
	if err := os.Truncate(path, results.MaxFileBytes); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Read(path); errors.As(err, &se) {
		t.Errorf("a file at the bound: %v", err)
	}
}
