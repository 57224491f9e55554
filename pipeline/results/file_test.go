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
// read a newer format's fields as its own.
func TestReadSchemaVersion(t *testing.T) {
	for _, tt := range []struct {
		name    string
		json    string
		wantErr int // the version refused; 0 for none
	}{
		{"this version", `{"schema_version": 1, "tool": "patchproof"}`, 0},
		{"before versions", `{"tool": "patchproof"}`, 0},
		{"a newer version", `{"schema_version": 99, "tool": "patchproof"}`, 99},
		// A newer format may change a field's type: the version is told
		// first, not the type.
		{"a newer version of other types", `{"schema_version": 2, "tool": "patchproof", "targets": {"master": {}}}`, 2},
		{"a negative version", `{"schema_version": -1, "tool": "patchproof"}`, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.json")
			if err := os.WriteFile(path, []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := results.Read(path)
			if tt.wantErr == 0 {
				if err != nil || res.Tool != "patchproof" {
					t.Fatalf("Read: %+v, %v; want it read", res, err)
				}
				return
			}
			var ve *results.VersionError
			if !errors.As(err, &ve) || ve.Version != tt.wantErr {
				t.Fatalf("Read: %+v, %v; want a *VersionError of version %d", res, err, tt.wantErr)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s", msg, path)
			}
			if res != nil {
				t.Errorf("Read returned a result with its error: %+v", res)
			}
		})
	}
}
