package abi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"
)

// The header probe reads a variant's layouts from a build that has no
// debug info (NTS: no build of it is made with -g): it compiles one C file
// that includes every installed header, as the build configured them
// (its main/php_config.h, with ZTS defined or not), with -g
// -fno-eliminate-unused-debug-types, so that the object's DWARF has every
// type the headers declare, laid out as the variant lays it out. It
// compiles what an extension compiles against the installed headers, with
// php-config's include directories: nothing is linked or run.
//
// Not every installed header compiles after the others: some are another
// platform's (tsrm_win32.h), some need a library the build was not
// configured with, some are fragments a single file includes in a context
// of its own (an arginfo header, the VM's handlers). Such a header is left
// out, with gcc's first error as the reason, and the probe compiles again
// without it: what is left out is data of the result (Probe.LeftOut), and
// its types are compared on neither side (Input.LeftOut).

// A Compiler runs the probe's gcc where the variant's builds ran: on this
// host, or in a build container that binds the probe's directory and the
// build, read-only, and nothing else of the host. The headers are the
// code under test: compiling them runs none of it, but what they include
// is theirs to name.
type Compiler interface {
	Compile(ctx context.Context, c CompileCmd) (runErr, execErr error)
}

// CompileCmd is one run of the probe's compiler.
type CompileCmd struct {
	Dir   string // the probe's directory: its working directory, written
	Build string // the build's directory, read
	Args  []string
	Env   []string
	// Output is given gcc's diagnostics.
	Output io.Writer
}

// ProbeOptions say what to probe and where.
type ProbeOptions struct {
	// Source is the tree the build was made from: its configure.ac and
	// config*.m4 say which headers are installed.
	Source string
	// Build is the finished build's directory: the headers as configured
	// (main/php_config.h and the other generated ones are there alone).
	Build string
	// Dir is the probe's directory, made if missing, its probe files
	// replaced: probe.c, and what gcc writes, probe.o and probe.d.
	Dir string
	// Log is given each compile's command and diagnostics; nil discards
	// them.
	Log io.Writer
}

// Probe is what a header probe made.
type Probe struct {
	// Object is the object whose DWARF has the layouts.
	Object string
	// Headers are the installed headers compiled, relative to the tree:
	// included by the probe or through another header.
	Headers []string
	// LeftOut are the installed headers not compiled, and why.
	LeftOut []LeftOut
	// Compiles are how many times gcc ran, Duration how long it all took.
	Compiles int
	Duration time.Duration
}

// LeftOut is an installed header a header probe did not compile.
type LeftOut struct {
	Header string `json:"header"`
	Why    string `json:"why"`
}

// notHeaders are installed files named .h that are no header an extension
// includes: the virtual machine's definition, a template PHP generates the
// VM from, and the handlers generated from it, which zend_execute.c alone
// includes in a context of its own. Compiling the handlers alone takes
// minutes; they declare no type.
var notHeaders = map[string]string{
	"Zend/zend_vm_def.h":     "the VM's definition: a template, not C",
	"Zend/zend_vm_execute.h": "the VM's generated handlers, zend_execute.c's alone",
}

// probeIncludes are the include directories php-config gives an extension
// (php-config --includes), in a build's directory.
var probeIncludes = []string{".", "main", "TSRM", "Zend", "ext", "ext/date/lib"}

// maxCompiles bounds the compiles of a probe: each leaves out at least one
// header, and a tree whose headers keep failing is not probed for ever.
const maxCompiles = 40

// probeTimeout bounds a probe: on a 2-core machine it takes seconds.
const probeTimeout = 5 * time.Minute

// maxDiagnostics bounds what is kept of one compile's diagnostics; the
// first errors name what to leave out.
const maxDiagnostics = 1 << 20

// ProbeHeaders compiles the installed headers of a build with debug info
// (see above). An error is the probe's own failure: a compiler that could
// not run, or headers that keep failing without naming one of them; a
// header that does not compile is left out instead.
func ProbeHeaders(ctx context.Context, c Compiler, opt ProbeOptions) (*Probe, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	fail := func(err error) (*Probe, error) {
		return nil, fmt.Errorf("probe the headers of %s: %w", opt.Build, err)
	}
	// The paths are gcc's arguments, where a container sees the same
	// paths, and the roots the DWARF's file names are matched under.
	var err error
	if opt.Build, err = filepath.Abs(opt.Build); err != nil {
		return fail(err)
	}
	if opt.Dir, err = filepath.Abs(opt.Dir); err != nil {
		return fail(err)
	}
	log := opt.Log
	if log == nil {
		log = io.Discard
	}
	headers, err := probeHeaders(opt.Source, opt.Build)
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return fail(err)
	}
	p := &Probe{Object: filepath.Join(opt.Dir, "probe.o")}
	why := map[string]string{}
	var keep []string
	for _, h := range headers {
		if w, ok := notHeaders[h]; ok {
			why[h] = w
			continue
		}
		keep = append(keep, h)
	}
	// An error is placed where it is, not in the macro that made it:
	// the place names the header to leave out.
	args := []string{"gcc", "-w", "-fdiagnostics-color=never", "-fno-diagnostics-show-caret", "-ftrack-macro-expansion=0"}
	for _, d := range probeIncludes {
		args = append(args, "-I"+filepath.Join(opt.Build, d))
	}
	// Each round preprocesses first: a missing header is fatal, and
	// found in a fraction of a compile's time.
	steps := [][]string{
		{"-E", "-o", "/dev/null", "probe.c"},
		{"-g", "-fno-eliminate-unused-debug-types", "-c", "probe.c", "-o", "probe.o", "-MD", "-MF", "probe.d"},
	}
	for done := false; !done; {
		if err := writeProbe(opt.Dir, keep); err != nil {
			return fail(err)
		}
		done = true
		for _, step := range steps {
			if p.Compiles == maxCompiles {
				return fail(fmt.Errorf("gcc still fails after %d compiles, each leaving out what failed", maxCompiles))
			}
			p.Compiles++
			cmd := append(append([]string(nil), args...), step...)
			fmt.Fprintf(log, "$ %s\n", strings.Join(cmd, " "))
			out := &boundedBuffer{max: maxDiagnostics}
			runErr, execErr := c.Compile(ctx, CompileCmd{Dir: opt.Dir, Build: opt.Build, Args: cmd, Env: []string{"LC_ALL=C"}, Output: io.MultiWriter(out, log)})
			if execErr != nil {
				return fail(execErr)
			}
			if runErr == nil {
				continue
			}
			if ctx.Err() != nil {
				return fail(ctx.Err())
			}
			bad := culprits(out.String(), opt.Build)
			if len(bad) == 0 {
				return fail(fmt.Errorf("gcc failed (%v) and named no header of the probe: %s", runErr, lastLines(out.String(), 5)))
			}
			var left []string
			for i, h := range keep {
				if msg, ok := bad[i+1]; ok {
					why[h] = msg
					continue
				}
				left = append(left, h)
			}
			if len(left) == len(keep) {
				return fail(fmt.Errorf("gcc failed (%v) at a line that includes no header: %s", runErr, lastLines(out.String(), 5)))
			}
			keep = left
			done = false
			break
		}
	}
	compiled, err := probeDeps(opt.Dir, opt.Build)
	if err != nil {
		return fail(err)
	}
	for _, h := range headers {
		if compiled[h] {
			p.Headers = append(p.Headers, h)
		} else {
			w := why[h]
			if w == "" {
				w = "not reached"
			}
			p.LeftOut = append(p.LeftOut, LeftOut{Header: h, Why: w})
		}
	}
	p.Duration = time.Since(start)
	return p, nil
}

// probeHeaders are the installed headers of src as the build at dir has
// them, in the order the probe includes them: main/php.h, which sets up
// what the others expect, then each directory's own header (zend.h,
// mysqlnd.h, php_spl.h: what includes the directory's others in their
// order), then
// the rest, sorted.
func probeHeaders(src, dir string) ([]string, error) {
	in, err := InstalledHeaders(src)
	if err != nil {
		return nil, err
	}
	// The build's directory is the code under test's: it is listed
	// through a root no link leaves.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var hs []string
	for f := range in.Files {
		if fi, err := root.Lstat(f); err == nil && fi.Mode().IsRegular() && strings.HasSuffix(f, ".h") {
			hs = append(hs, f)
		}
	}
	for d := range in.Dirs {
		es, err := fs.ReadDir(root.FS(), d)
		if err != nil {
			continue // not in this build
		}
		for _, e := range es {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".h") {
				hs = append(hs, path.Join(d, e.Name()))
			}
		}
	}
	rank := func(h string) int {
		d, f := path.Split(h)
		base := path.Base(d)
		switch {
		case h == "main/php.h":
			return 0
		case strings.EqualFold(f, base+".h") || strings.EqualFold(f, "php_"+base+".h"):
			return 1
		}
		return 2
	}
	sort.Slice(hs, func(i, j int) bool {
		if ri, rj := rank(hs[i]), rank(hs[j]); ri != rj {
			return ri < rj
		}
		return hs[i] < hs[j]
	})
	if len(hs) == 0 || hs[0] != "main/php.h" {
		return nil, fmt.Errorf("%s has no main/php.h", dir)
	}
	// The probe names each header in a C string.
	for _, h := range hs {
		if strings.ContainsAny(h, "\"\\\n") {
			return nil, fmt.Errorf("a header's name cannot be included: %q", h)
		}
	}
	return hs, nil
}

// writeProbe writes the probe's source: line i includes headers[i-1], so
// that gcc's "from probe.c:LINE" names the header.
func writeProbe(dir string, headers []string) error {
	var b strings.Builder
	for _, h := range headers {
		fmt.Fprintf(&b, "#include \"%s\"\n", h)
	}
	for _, f := range []string{"probe.c", "probe.o", "probe.d"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return safefs.WriteFile(dir, "probe.c", []byte(b.String()), 0o644)
}

var (
	// diagnosticRE is a gcc diagnostic: FILE:LINE[:COLUMN]: KIND: MESSAGE.
	diagnosticRE = regexp.MustCompile(`^([^\s:][^:]*):(\d+)(?::\d+)?: (fatal error|error|warning|note): (.*)$`)
	// includedRE is a line of the include chain gcc prints before a
	// diagnostic in another file than the last one's.
	includedRE = regexp.MustCompile(`^(?:In file included from|\s+from) (.+):(\d+)[:,]$`)
)

// culprits reads gcc's diagnostics of a probe: for each line of probe.c
// whose header (or a header it includes) has an error, the first error's
// message, with the build's directory left out of it. A file's errors are
// its first includer's: gcc prints the chain that reached a file when its
// diagnostics begin, and a header is compiled once (its guard).
func culprits(out, build string) map[int]string {
	bad := map[int]string{}
	owner := map[string]int{} // file → probe.c's line that reached it
	chain := 0                // the probe.c line of the chain just printed
	for _, line := range strings.Split(out, "\n") {
		if m := includedRE.FindStringSubmatch(line); m != nil {
			if m[1] == "probe.c" {
				chain, _ = strconv.Atoi(m[2])
			}
			continue
		}
		m := diagnosticRE.FindStringSubmatch(line)
		if m == nil {
			// "FILE: In function…" places what follows; the chain
			// before it is the next diagnostic's.
			continue
		}
		file, kind, msg := m[1], m[3], m[4]
		n, _ := strconv.Atoi(m[2])
		if chain != 0 {
			owner[file] = chain
			chain = 0
		}
		at := owner[file]
		if file == "probe.c" {
			at = n
		}
		if at == 0 || (kind != "error" && kind != "fatal error") {
			continue
		}
		if _, seen := bad[at]; !seen {
			// A generated header's #line can name the directory the
			// build was made in, a host path: its base name is enough.
			where := filepath.Base(file)
			if rel, err := filepath.Rel(build, file); err == nil && filepath.IsLocal(rel) {
				where = filepath.ToSlash(rel)
			}
			msg = strings.ReplaceAll(msg, build+"/", "")
			if r := []rune(msg); len(r) > maxWhy {
				msg = string(r[:maxWhy]) + "…"
			}
			bad[at] = fmt.Sprintf("%s:%d: %s", where, n, msg)
		}
	}
	return bad
}

// maxWhy bounds the error a header is left out for, in characters: a
// type in gcc's words can be long.
const maxWhy = 160

// maxDeps bounds the dependency file gcc writes: a few hundred paths.
const maxDeps = 4 << 20

// probeDeps are the installed headers (relative to the build) the
// probe's compile read, from the dependency file it wrote.
func probeDeps(dir, build string) (map[string]bool, error) {
	b, err := safefs.ReadFile(dir, "probe.d", maxDeps)
	if err != nil {
		return nil, err
	}
	got := map[string]bool{}
	// A rule's continuation lines end in a backslash; the paths gcc
	// writes here have no space to escape.
	for _, w := range strings.Fields(strings.ReplaceAll(string(b), "\\\n", " ")) {
		rel, err := filepath.Rel(build, w)
		if err == nil && filepath.IsLocal(rel) {
			got[filepath.ToSlash(rel)] = true
		}
	}
	return got, nil
}

// boundedBuffer keeps the first max bytes written to it.
type boundedBuffer struct {
	strings.Builder
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Builder.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// lastLines is the last n lines of s, joined by " / ".
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
