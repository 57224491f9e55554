package builders

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/patchproof/patchproof/internal/safefs"
)

// PHP compiles every file through libtool 1.5.26's compile mode, a shell
// script that quotes each argument through echo and sed: about a hundred
// processes, 0.9 s of wall and 1.1 s of CPU a file on the 2-core VM here,
// where gcc itself takes 1 to 2 s cold and a ccache hit 0.03 s. So half of
// a cold build's CPU, and nearly all of a warm-ccache one's, went to
// libtool. A build whose libtool is that version, configured as PHP
// configures it on Linux, compiles instead through a shim of its own (the
// script below, a handful of processes a file): the same compiler
// commands in the same order, with the same arguments, and the same .lo
// files, byte for byte; everything else libtool does (linking, installing)
// still goes to the tree's libtool. TestLibtoolShimMatchesLibtool compiles
// with both and compares what they wrote.

// shimName is the shim's file in a build's tree.
const shimName = ".patchproof-libtool"

// libtoolConfig is what the shim takes from a tree's libtool: whether it
// makes PIC objects (for a shared SAPI, the Apache module) and non-PIC
// ones (for php), the PIC flags, configure's --with-pic or --without-pic
// (picMode: yes puts the PIC flags on the non-PIC objects too, no leaves
// them off the PIC ones), and the line naming libtool in a .lo.
type libtoolConfig struct {
	shared, static bool
	picFlag        string
	picMode        string
	generatedBy    string
}

// shimSafe is what the shim writes between single quotes: what it reads
// from a libtool configure wrote, in a container for an untrusted tree.
var shimSafe = regexp.MustCompile(`^[A-Za-z0-9 ._/:()=+-]*$`)

// readLibtool reads the libtool configuration of the tree, ok false when
// the shim does not reproduce that libtool: another version, or a setting
// whose code path the shim leaves out (locks, a compiler without -c -o).
// Only the first section counts: the per-tag ones at the end of the script
// (CXX, disable-shared) are for the builds that ask for them, and the shim
// takes --tag=CC only.
func readLibtool(tree string) (c libtoolConfig, ok bool, err error) {
	data, err := safefs.ReadFile(tree, "libtool", 4<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# ### BEGIN LIBTOOL TAG CONFIG") {
			break
		}
		name, value, found := strings.Cut(line, "=")
		if !found || strings.ContainsAny(name, " \t$#") || name == "" {
			continue
		}
		if _, seen := vars[name]; seen {
			continue
		}
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		vars[name] = value
	}
	if err := sc.Err(); err != nil {
		return c, false, fmt.Errorf("read %s/libtool: %w", tree, err)
	}
	want := map[string]string{"VERSION": "1.5.26", "PROGRAM": "ltmain.sh", "PACKAGE": "libtool",
		"compiler_c_o": "yes", "need_locks": "no", "objdir": ".libs", "objext": "o",
		"fix_srcfile_path": "", "host_os": "linux-gnu"}
	for name, v := range want {
		if got, seen := vars[name]; !seen || got != v {
			return c, false, nil
		}
	}
	yes := func(name string) (bool, bool) {
		switch vars[name] {
		case "yes":
			return true, true
		case "no":
			return false, true
		}
		return false, false
	}
	switch c.picMode = vars["pic_mode"]; c.picMode {
	case "default", "yes", "no":
	default:
		return c, false, nil
	}
	var ok1, ok2 bool
	c.shared, ok1 = yes("build_libtool_libs")
	c.static, ok2 = yes("build_old_libs")
	c.picFlag = strings.TrimSpace(vars["pic_flag"])
	c.generatedBy = vars["PROGRAM"] + " - GNU " + vars["PACKAGE"] + " " + vars["VERSION"] + vars["TIMESTAMP"]
	if !ok1 || !ok2 || !shimSafe.MatchString(c.picFlag) || !shimSafe.MatchString(c.generatedBy) {
		return c, false, nil
	}
	return c, true, nil
}

// makeLibtool is the Makefile's LIBTOOL when it is the line PHP's
// configure writes, the one the shim is put in front of.
const makeLibtool = "$(SHELL) $(top_builddir)/libtool --silent --preserve-dup-deps"

// installShim writes the shim into the tree and returns the make argument
// that puts it in front of libtool, "" when the tree's libtool or Makefile
// is not what the shim reproduces (the build then runs libtool itself).
// The tree may hold what an untrusted configure wrote: the shim replaces
// whatever is at its name, a link included, and never writes through one.
func installShim(tree string) (string, error) {
	if !ccachePath.MatchString(tree) {
		return "", nil // a path make would split or the shim would have to quote
	}
	c, ok, err := readLibtool(tree)
	if err != nil || !ok {
		return "", err
	}
	mk, err := safefs.ReadFile(tree, "Makefile", 16<<20)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(mk, []byte("\nLIBTOOL = "+makeLibtool+"\n")) {
		return "", nil
	}
	root, err := os.OpenRoot(tree)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := root.Remove(shimName); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("libtool shim: %w", err)
	}
	f, err := root.OpenFile(shimName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("libtool shim: %w", err)
	}
	_, werr := f.WriteString(shimScript(c))
	if err := errors.Join(werr, f.Close()); err != nil {
		return "", fmt.Errorf("libtool shim: %w", err)
	}
	return "LIBTOOL=/bin/sh " + tree + "/" + shimName + " " + makeLibtool, nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// shimScript is the shim for a libtool configured as c. It is run as
// "sh SHIM SHELL LIBTOOL --silent --preserve-dup-deps ARGS...": anything
// but a C compile with none of the options it leaves out is handed to
// "SHELL LIBTOOL ...", unchanged. A compile does what libtool 1.5.26's
// compile mode does for a compiler that takes -c and -o: the command
// without "-o X.lo", with the PIC flags and "-o DIR/.libs/X.o" for a PIC
// object, then plain with "-o DIR/X.o" (its output discarded when the PIC
// compile showed it), and the .lo naming both. With --with-pic both
// compiles take the PIC flags, and so are one command but for -o, which
// ccache answers the second time; with --without-pic neither does.
func shimScript(c libtoolConfig) string {
	return `# patchproof's libtool compile step for this build: see builders/libtool.go
# in patchproof. Written for one tree; configure's libtool decides the rest.
shared=` + yesNo(c.shared) + ` static=` + yesNo(c.static) + ` picflag='` + c.picFlag + `' picmode=` + c.picMode + `
generated='` + c.generatedBy + `'
sh=$1 lt=$2
shift 2
libtool() { exec "$sh" "$lt" "$@"; }
[ "$1 $2 $3 $4" = "--silent --preserve-dup-deps --tag=CC --mode=compile" ] || libtool "$@"
libobj= n=0 next=
for a; do
	n=$((n + 1))
	[ "$n" -le 4 ] && continue
	if [ -n "$next" ]; then libobj=$a next=; continue; fi
	case $a in
	-o) [ -z "$libobj" ] || libtool "$@"; next=1 ;;
	-static | -shared | -prefer-pic | -prefer-non-pic | -no-suppress | -Xcompiler | -Wc,*) libtool "$@" ;;
	esac
done
case $libobj in
*.lo) ;;
*) libtool "$@" ;;
esac
case $libobj in
*[!A-Za-z0-9._/+-]*) libtool "$@" ;;
esac
# The command: the arguments after libtool's four, less "-o X.lo".
n=0 skip= first=1
for a; do
	if [ -n "$first" ]; then set --; first=; fi
	n=$((n + 1))
	[ "$n" -le 4 ] && continue
	if [ -n "$skip" ]; then skip=; continue; fi
	if [ "$a" = -o ]; then skip=1; continue; fi
	set -- "$@" "$a"
done
obj=${libobj%.lo}.o
objname=${obj##*/}
case $obj in
*/*) xdir=${obj%/*}/ ;;
*) xdir= ;;
esac
lobj=${xdir}.libs/$objname
if [ "$static" = yes ]; then
	removelist="$obj $lobj $libobj ${libobj}T"
else
	removelist="$lobj $libobj ${libobj}T"
fi
rm -f $removelist
trap 'rm -f $removelist; exit 1' HUP INT TERM
printf '# %s - a libtool object file\n# Generated by %s\n#\n# Please DO NOT delete this file!\n# It is necessary for linking the library.\n\n# Name of the PIC object.\n' "$libobj" "$generated" >"${libobj}T"
quiet=
if [ "$shared" = yes ]; then
	[ -d "${xdir}.libs" ] || mkdir "${xdir}.libs" || [ -d "${xdir}.libs" ] || exit 1
	pic=$picflag
	[ "$picmode" = no ] && pic=
	# shellcheck disable=SC2086 # the PIC flags are words
	"$@" $pic -o "$lobj" || exit 1
	printf "pic_object='.libs/%s'\n\n" "$objname" >>"${libobj}T"
	quiet=1
else
	printf 'pic_object=none\n\n' >>"${libobj}T"
fi
if [ "$static" = yes ]; then
	pic=
	[ "$picmode" = yes ] && pic=$picflag
	# shellcheck disable=SC2086 # the PIC flags are words
	if [ -n "$quiet" ]; then
		"$@" $pic -o "$obj" >/dev/null 2>&1 || { rm -f $removelist; exit 1; }
	else
		"$@" $pic -o "$obj" || { rm -f $removelist; exit 1; }
	fi
	printf "# Name of the non-PIC object.\nnon_pic_object='%s'\n\n" "$objname" >>"${libobj}T"
else
	printf '# Name of the non-PIC object.\nnon_pic_object=none\n\n' >>"${libobj}T"
fi
mv -f "${libobj}T" "$libobj"
`
}
