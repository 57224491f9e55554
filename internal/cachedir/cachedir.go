// Package cachedir owns patchproof's cache directory: where it is, and the
// locks that keep it consistent when runs overlap or are killed. Everything
// in the cache lands by rename, so a reader sees a whole entry or none.
package cachedir

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Default is the cache directory when --cache is not given:
// $PATCHPROOF_CACHE as getenv reads it, else $XDG_CACHE_HOME/patchproof or
// ~/.cache/patchproof.
func Default(getenv func(string) string) (string, error) {
	if d := getenv("PATCHPROOF_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the user cache dir (use --cache): %w", err)
	}
	return filepath.Join(d, "patchproof"), nil
}

// Lock takes an exclusive flock on path (created if needed), waiting for it.
// The kernel drops it when the process dies, so a killed run never leaves a
// stale lock. The returned func releases it.
func Lock(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
