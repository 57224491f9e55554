package builders

import (
	"bufio"
	"fmt"
	"github.com/patchproof/patchproof/internal/safefs"
	"io"
	"strings"
)

// countObjects returns how many distinct libtool objects (.lo) the
// Makefile configure generated has a compile rule for: a rule naming the
// object as a target, followed by a recipe. php-src writes one such rule
// per source file (PHP_ADD_SOURCES), and target-only lines such as
// "Zend/zend_compile.lo: Zend/zend_language_parser.h" add prerequisites,
// not compiles. It counts every object configure knew of, some of which a
// build may leave alone (main/fastcgi.lo with no CGI or FPM), so a
// finished build's count of compiles can stay below it.
func countObjects(makefile string) (int, error) {
	f, err := safefs.OpenPath(makefile)
	if err != nil {
		return 0, fmt.Errorf("count objects: %w", err)
	}
	defer f.Close()
	// The tree's configure wrote it: php-src's is some 300 KB.
	n, err := countRecipeObjects(io.LimitReader(f, 64<<20))
	if err != nil {
		return 0, fmt.Errorf("count objects in %s: %w", makefile, err)
	}
	return n, nil
}

func countRecipeObjects(r io.Reader) (int, error) {
	seen := map[string]bool{}
	var pending []string // the .lo targets of the rule line just read
	sc := bufio.NewScanner(r)
	// php-src's object lists are single lines of several kilobytes.
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	var line strings.Builder
	for sc.Scan() {
		text := sc.Text()
		if cont, ok := strings.CutSuffix(text, `\`); ok {
			line.WriteString(cont)
			line.WriteByte(' ')
			continue
		}
		line.WriteString(text)
		logical := line.String()
		line.Reset()
		if strings.HasPrefix(logical, "\t") {
			for _, o := range pending {
				seen[o] = true
			}
			pending = nil
			continue
		}
		pending = loTargets(logical)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return len(seen), nil
}

// loTargets returns the .lo targets of a rule line, or nil for any other
// line: a variable assignment (its "=" comes before any ":"), a comment, a
// pattern or suffix rule.
func loTargets(line string) []string {
	if strings.HasPrefix(line, "#") {
		return nil
	}
	colon := strings.IndexByte(line, ':')
	if colon < 0 || strings.Contains(line[:colon], "=") || strings.HasPrefix(line[colon:], ":=") {
		return nil
	}
	var out []string
	for _, t := range strings.Fields(line[:colon]) {
		if strings.HasSuffix(t, ".lo") && !strings.HasPrefix(t, ".") && !strings.Contains(t, "%") {
			out = append(out, t)
		}
	}
	return out
}
