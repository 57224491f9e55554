package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes r to path through a temporary file and a rename, so that
// a reader (or a crash) never sees half a results.json.
func (r *Result) WriteFile(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// VersionError is a results.json of a schema version this code does not
// know: one written by a newer patchproof, whose fields it would misread.
type VersionError struct {
	Path    string
	Version int
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("read %s: schema_version %d: this patchproof reads versions 0 to %d", e.Path, e.Version, SchemaVersion)
}

// Read reads a results.json of a schema version this code knows (0, before
// versions were written, to SchemaVersion), else fails with a
// *VersionError.
func Read(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// The version first, on its own: a newer format may have changed the
	// type of a field, and its version is the error to tell.
	var v struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &v); err == nil && (v.SchemaVersion < 0 || v.SchemaVersion > SchemaVersion) {
		return nil, &VersionError{Path: path, Version: v.SchemaVersion}
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &r, nil
}
