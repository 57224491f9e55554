// Package aptsource finds the Debian mirror this machine's apt uses, so that
// patchproof downloads Debian's packages and source packages from where the
// machine's administrator points apt, and names no mirror of its own.
package aptsource

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNoMirror is wrapped when no apt source names a Debian archive.
var ErrNoMirror = errors.New("no Debian mirror in the apt sources")

// Default are the files apt reads its sources from.
var Default = Files{List: "/etc/apt/sources.list", Dir: "/etc/apt/sources.list.d"}

// Files are where to look: a one-line-style sources.list and a directory of
// deb822 *.sources and *.list files.
type Files struct {
	List string
	Dir  string
}

// Mirror returns the URI of the first binary ("deb") source of the main
// archive: not the security archive, whose pool holds only security
// updates. The result has no trailing slash.
func (f Files) Mirror() (string, error) {
	srcs, read, err := f.read()
	if err != nil {
		return "", err
	}
	for _, s := range srcs {
		if s.main() {
			return strings.TrimSuffix(s.uri, "/"), nil
		}
	}
	return "", noMirror(read)
}

// ImageSources returns the sources.list, one line a source, that gives an
// image of Debian release the packages this machine gets: the main
// archive's suites of that release the machine uses (release,
// release-updates) and its security archive's (release-security), the
// main component of each. An image made from them installs the same
// package versions as apt does here.
func (f Files) ImageSources(release string) (string, error) {
	srcs, read, err := f.read()
	if err != nil {
		return "", err
	}
	mirror := ""
	for _, s := range srcs {
		if s.main() {
			mirror = strings.TrimSuffix(s.uri, "/")
			break
		}
	}
	if mirror == "" {
		return "", noMirror(read)
	}
	lines := []string{"deb " + mirror + " " + release + " main"}
	add := func(uri, suite string) {
		l := "deb " + strings.TrimSuffix(uri, "/") + " " + suite + " main"
		if !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	security := false
	for _, s := range srcs {
		if !slices.Contains(s.types, "deb") {
			continue
		}
		for _, suite := range s.suites {
			switch {
			case suite == release+"-updates" && strings.TrimSuffix(s.uri, "/") == mirror:
				add(s.uri, suite)
			case suite == release+"-security" && !security:
				add(s.uri, suite)
				security = true
			}
		}
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// read parses the enabled sources of every file, in apt's order, and says
// which files it read.
func (f Files) read() ([]source, []string, error) {
	var files []string
	if f.List != "" {
		files = append(files, f.List)
	}
	if f.Dir != "" {
		for _, pat := range []string{"*.sources", "*.list"} {
			m, _ := filepath.Glob(filepath.Join(f.Dir, pat))
			slices.Sort(m)
			files = append(files, m...)
		}
	}
	var read []string
	var all []source
	for _, path := range files {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, read, fmt.Errorf("apt sources: %w", err)
		}
		read = append(read, path)
		if strings.HasSuffix(path, ".sources") {
			all = append(all, parseDeb822(b)...)
		} else {
			all = append(all, parseOneLine(b)...)
		}
	}
	if len(read) == 0 {
		return nil, nil, fmt.Errorf("%w: none of %s exists", ErrNoMirror, strings.Join(files, ", "))
	}
	return all, read, nil
}

func noMirror(read []string) error {
	return fmt.Errorf("%w (read %s)", ErrNoMirror, strings.Join(read, ", "))
}

type source struct {
	types  []string
	uri    string
	suites []string
	off    bool // Enabled: no
}

// main reports whether s is a binary source of the main archive.
func (s source) main() bool {
	if !slices.Contains(s.types, "deb") || s.uri == "" {
		return false
	}
	for _, suite := range s.suites {
		if strings.HasSuffix(suite, "-security") || strings.HasSuffix(suite, "/updates") {
			return false
		}
	}
	return len(s.suites) > 0
}

// parseDeb822 reads stanzas of "Types:", "URIs:" and "Suites:" fields.
func parseDeb822(b []byte) []source {
	var out []source
	var cur source
	var fields int
	flush := func() {
		if fields > 0 && !cur.off {
			out = append(out, cur)
		}
		cur, fields = source{}, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields++
		vals := strings.Fields(v)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "types":
			cur.types = vals
		case "uris":
			if len(vals) > 0 {
				cur.uri = vals[0]
			}
		case "suites":
			cur.suites = vals
		case "enabled":
			cur.off = len(vals) > 0 && strings.EqualFold(vals[0], "no")
		}
	}
	flush()
	return out
}

// parseOneLine reads "deb [options] URI SUITE COMPONENT..." lines.
func parseOneLine(b []byte) []source {
	var out []source
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		s := source{types: []string{f[0]}}
		rest := f[1:]
		if strings.HasPrefix(rest[0], "[") {
			for len(rest) > 0 && !strings.HasSuffix(rest[0], "]") {
				rest = rest[1:]
			}
			if len(rest) > 0 {
				rest = rest[1:]
			}
		}
		if len(rest) < 2 {
			continue
		}
		s.uri, s.suites = rest[0], []string{rest[1]}
		out = append(out, s)
	}
	return out
}
