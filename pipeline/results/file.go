package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchproof/patchproof/internal/safefs"
)

// MaxFileBytes bounds the read of a results.json: the demo's largest is
// 1.5 MB, and a report job reads files that machines running a PR's code
// wrote, so that one of gigabytes must not take the job's memory.
const MaxFileBytes = 64 << 20

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
// know: one written by a newer patchproof, whose fields it would misread,
// or one that names no version (Missing), which no patchproof that
// versions its results wrote and which is not read as passed by default.
type VersionError struct {
	Path    string
	Version int
	Missing bool // no schema_version at all (or null)
}

func (e *VersionError) Error() string {
	if e.Missing {
		return fmt.Sprintf("read %s: no schema_version: this patchproof reads versions 1 to %d", e.Path, SchemaVersion)
	}
	return fmt.Sprintf("read %s: schema_version %d: this patchproof reads versions 1 to %d", e.Path, e.Version, SchemaVersion)
}

// SizeError is a results.json larger than MaxFileBytes.
type SizeError struct {
	Path string
	Max  int64
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("read %s: larger than %d MiB, the most a results.json may be", e.Path, e.Max>>20)
}

// Read reads a results.json of a schema version this code knows (1 to
// SchemaVersion), else fails with a *VersionError, and of at most
// MaxFileBytes, else a *SizeError. The file is read as safefs reads what
// code under test could have placed: a regular file, not through a link
// out of its directory.
func Read(path string) (*Result, error) {
	b, err := safefs.ReadPath(path, MaxFileBytes)
	if errors.Is(err, safefs.ErrTooLarge) {
		return nil, &SizeError{Path: path, Max: MaxFileBytes}
	}
	if err != nil {
		return nil, err
	}
	// The version first, on its own: a newer format may have changed the
	// type of a field, and its version is the error to tell.
	var v struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &v); err == nil {
		switch {
		case v.SchemaVersion == nil:
			return nil, &VersionError{Path: path, Missing: true}
		case *v.SchemaVersion < 1 || *v.SchemaVersion > SchemaVersion:
			return nil, &VersionError{Path: path, Version: *v.SchemaVersion}
		}
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &r, nil
}
