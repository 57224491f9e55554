package builders

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/patchproof/patchproof/internal/safefs"
)

// filesFile, in a build's entry, holds the digest of every file a later
// stage reads from the build (see readLater), by path in the entry. The
// entry's Digests holds its own digest, so that a changed file, or a
// changed list, rejects the entry.
const filesFile = "patchproof-files.json"

// maxFilesFile bounds what is read of filesFile: a few thousand paths and
// digests, far below it.
const maxFilesFile = 16 << 20

// laterDirs are the directories whose every file a later stage reads: the
// tests stage's suites (with ext/pdo's tests, which pdo_mysql's include),
// and the shared extensions any stage may load.
var laterDirs = []string{"ext/mysqlnd/tests/", "ext/mysqli/tests/", "ext/pdo_mysql/tests/", "ext/pdo/tests/", "modules/"}

// laterFiles are the single files a later stage reads: the php binary,
// the server module, and the tests harness (run-tests.php, and the header
// by which it recognises the tree's root).
var laterFiles = []string{phpPath, modulePath, "run-tests.php", "main/php_version.h"}

// readLater reports whether a later stage reads the file rel
// (slash-separated, in a build's directory): codediff every object file
// (--objects is any glob, and it falls back to *.o), and the files of
// laterFiles and laterDirs.
func readLater(rel string) bool {
	if strings.HasSuffix(rel, ".o") || slices.Contains(laterFiles, rel) {
		return true
	}
	return slices.ContainsFunc(laterDirs, func(d string) bool { return strings.HasPrefix(rel, d) })
}

// findLater lists what readLater selects under root, sorted: every entry
// that is not a directory, symlinks included, so that a symlink planted in
// the place of a file, or beside the files, is seen.
func findLater(root *os.Root) ([]string, error) {
	var rels []string
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && readLater(p) {
			rels = append(rels, p)
		}
		return nil
	})
	return rels, err
}

// recordFiles writes filesFile into the finished build dir and returns its
// digest. A file that is not a regular one (a symlink the build made) is an
// error: a later stage would read what it points to.
func recordFiles(dir string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	rels, err := findLater(root)
	if err != nil {
		return "", fmt.Errorf("list the files later stages read: %w", err)
	}
	m := make(map[string]string, len(rels))
	for _, rel := range rels {
		if m[rel], err = digest(root, rel); err != nil {
			return "", err
		}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	// The build could have put a link at the name: made anew, never followed.
	if err := safefs.WriteFile(dir, filesFile, data, 0o644); err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// verifyFiles checks the entry opened as root against its filesFile, whose
// digest is want: the same files are there, with the same digests. The
// list is read once and checked from those bytes, so that it cannot change
// between its check and its use.
func verifyFiles(root *os.Root, want string) error {
	f, err := root.OpenFile(filesFile, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("read %s: %w", filesFile, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFilesFile+1))
	f.Close()
	if err != nil {
		return fmt.Errorf("read %s: %w", filesFile, err)
	}
	if len(data) > maxFilesFile {
		return fmt.Errorf("read %s: larger than %d bytes", filesFile, maxFilesFile)
	}
	sum := sha256.Sum256(data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("%s has digest %s, the entry recorded %s", filesFile, got, want)
	}
	var recorded map[string]string
	if err := json.Unmarshal(data, &recorded); err != nil {
		return fmt.Errorf("read %s: %w", filesFile, err)
	}
	found, err := findLater(root)
	if err != nil {
		return fmt.Errorf("list the files later stages read: %w", err)
	}
	for _, rel := range found {
		if _, ok := recorded[rel]; !ok {
			return fmt.Errorf("%s is not a file the build made", rel)
		}
	}
	rels := make([]string, 0, len(recorded))
	for rel := range recorded {
		if !fs.ValidPath(rel) || path.Clean(rel) != rel {
			return fmt.Errorf("%s names %q, not a path in the entry", filesFile, rel)
		}
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	for _, rel := range rels {
		got, err := digest(root, rel)
		if err != nil {
			return err
		}
		if got != recorded[rel] {
			return fmt.Errorf("%s has digest %s, the entry recorded %s", rel, got, recorded[rel])
		}
	}
	return nil
}

// errNoFiles is an entry written before filesFile was: its files are
// digested at its first use (upgradeEntry).
var errNoFiles = errors.New("no digest of " + filesFile)
