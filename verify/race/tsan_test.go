package race

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/golden"
)

// capturedSymbolizer answers from addr2line's answers for the module the
// captured reports came from (testdata/*.addr2line.txt: offset, function,
// file:line), so that the test needs no build.
func capturedSymbolizer(t *testing.T, path string) Symbolizer {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	known := map[uint64][2]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		off, err := strconv.ParseUint(strings.TrimPrefix(f[0], "0x"), 16, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		known[off] = [2]string{f[1], f[2]}
	}
	return func(module string, offsets []uint64) (map[uint64]Frame, error) {
		if module != "libphp.so" {
			return nil, nil
		}
		table.Reset()
		for _, o := range offsets {
			k, ok := known[o]
			if !ok {
				k = [2]string{"??", "??:0"}
			}
			fmt.Fprintf(&table, "%s\n%s\n", k[0], k[1])
		}
		return parseAddr2Line(table.Bytes(), offsets)
	}
}

// summary renders reports the way a reviewer reads them: kind, count,
// attributed file, and each access's top frames.
func summary(reports []Report) []byte {
	var b bytes.Buffer
	for _, r := range reports {
		fmt.Fprintf(&b, "%s ×%d in %s: %s\n", r.Kind, r.Count, r.File, r.Summary)
		for _, a := range r.Accesses {
			fmt.Fprintf(&b, "  %s\n", opOf(a.What))
			for i, f := range a.Stack {
				if i == signatureFrames {
					break
				}
				fmt.Fprintf(&b, "    %s\n", f)
			}
		}
		if r.Location != "" {
			fmt.Fprintf(&b, "  %s\n", r.Location)
		}
	}
	return b.Bytes()
}

// TestParseRacyMysqlnd reads what TSan wrote under Apache, 16 threads, 300
// requests, for a build whose ZTS statistics lock was dropped.
func TestParseRacyMysqlnd(t *testing.T) {
	data, err := os.ReadFile("testdata/racy-mysqlnd.tsan.log")
	if err != nil {
		t.Fatal(err)
	}
	reports, err := Parse(data, capturedSymbolizer(t, "testdata/racy-mysqlnd.addr2line.txt"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range reports {
		total += r.Count
		if r.Kind != "data race" || len(r.Accesses) != 2 {
			t.Errorf("report %q: %d accesses, want a data race of 2", r.Summary, len(r.Accesses))
		}
		if !strings.HasPrefix(r.File, "ext/mysqlnd/") {
			t.Errorf("report attributed to %q, want ext/mysqlnd/", r.File)
		}
		if want := "data race " + r.File; !strings.HasPrefix(r.Summary, want) || strings.Contains(r.Summary, "+0x") {
			t.Errorf("summary %q, want it to start %q, with no address", r.Summary, want)
		}
	}
	if total != 42 {
		t.Errorf("%d reports in all, want the 42 warnings of the log", total)
	}
	golden.Check(t, "testdata/racy-mysqlnd.golden", summary(reports))

	// Unnamed, the reports still parse, and the same frames compare equal.
	raw, err := Parse(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) == 0 || raw[0].Accesses[0].Stack[0].Offset == 0 {
		t.Errorf("unnamed frames keep no offset: %+v", raw)
	}
}

func TestParseNamedFrames(t *testing.T) {
	// The runtime's own naming, as it prints it when it can symbolize: the
	// build directory differs between base and head, the signature not.
	report := func(dir string, line int) string {
		return fmt.Sprintf(`some server output
==================
WARNING: ThreadSanitizer: data race (pid=4242)
  Write of size 8 at 0x7b6800000600 by thread T3:
    #0 php_mysqlnd_rowp_read %[1]s/ext/mysqlnd/mysqlnd_wireprotocol.c:%[2]d (libphp.so+0x448218)
    #1 zend_execute %[1]s/Zend/zend_vm_execute.h:60000:3 (libphp.so+0x2d305f)
    #2 ap_run_handler <null> (apache2+0x6335f)

  Previous read of size 8 at 0x7b6800000600 by thread T1 (mutexes: write M42):
    #0 mysqlnd_mysqlnd_pfc_send_pub %[1]s/ext/mysqlnd/mysqlnd_protocol_frame_codec.c:192 (libphp.so+0x448203)
    #1 <null> <null> (libapr-1.so.0+0x2b3a0)

  Location is heap block of size 1304 at 0x7b6800000600 allocated by main thread:
    #0 malloc ../../../../src/libsanitizer/tsan/tsan_interceptors_posix.cpp:647 (libtsan.so.2.0.0+0x3ebb8)

  Mutex M42 (0x7b0c00000010) created at:
    #0 pthread_mutex_init ../../../../src/libsanitizer/tsan/tsan_interceptors_posix.cpp:1316 (libtsan.so.2.0.0+0x4a0c8)

SUMMARY: ThreadSanitizer: data race %[1]s/ext/mysqlnd/mysqlnd_wireprotocol.c:%[2]d in php_mysqlnd_rowp_read
==================
`, dir, line)
	}
	base, err := Parse([]byte(report("/root/.cache/patchproof/builds/0a1b.tmp-77", 1739)), nil)
	if err != nil {
		t.Fatal(err)
	}
	head, err := Parse([]byte(report("/work/head", 1745)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(base) != 1 || len(head) != 1 {
		t.Fatalf("%d and %d reports, want 1 each", len(base), len(head))
	}
	r := base[0]
	if r.File != "ext/mysqlnd/mysqlnd_wireprotocol.c" || r.Summary != "data race ext/mysqlnd/mysqlnd_wireprotocol.c:1739 in php_mysqlnd_rowp_read" {
		t.Errorf("file %q summary %q", r.File, r.Summary)
	}
	if got := r.Accesses[1].Stack[1].String(); got != "libapr-1.so.0+0x2b3a0" {
		t.Errorf("an unnamed frame reads %q", got)
	}
	if got := r.Location; got != "Location is heap block of size 1304 at 0x… allocated by main thread" {
		t.Errorf("location %q", got)
	}
	if base[0].Signature() != head[0].Signature() {
		t.Errorf("signatures differ across build dirs and lines:\n%s\n%s", base[0].Signature(), head[0].Signature())
	}
}

func TestParseRejectsGarbledFrame(t *testing.T) {
	_, err := Parse([]byte("WARNING: ThreadSanitizer: data race (pid=1)\n  Read of size 8 at 0x10 by thread T1:\n    #0 what is this\n"), nil)
	if err == nil {
		t.Error("a frame line that is not understood was accepted")
	}
}

func TestCompareRaces(t *testing.T) {
	mk := func(fn, file string) Report {
		st := []Frame{{Func: fn, File: file, Line: 1}}
		return Report{Kind: "data race", File: file, Accesses: []Access{{What: "Write of size 8 at 0x1 by thread T1", Stack: st}, {What: "Previous write of size 8 at 0x1 by thread T2", Stack: st}}, Count: 1}
	}
	shared := mk("zend_signal_handler", "Zend/zend_signal.c")
	mysqlnd := mk("php_mysqlnd_rowp_read", "ext/mysqlnd/mysqlnd_wireprotocol.c")
	touched := mk("helper", "main/touched.c")
	elsewhere := mk("spl_thing", "ext/spl/spl.c")
	gone := mk("old_race", "ext/standard/x.c")
	d := CompareRaces([]Report{shared, gone}, []Report{shared, mysqlnd, touched, elsewhere}, Scope{Touched: []string{"main/touched.c"}, Dirs: DefaultDirs})
	names := func(rs []Report) (s []string) {
		for _, r := range rs {
			s = append(s, r.Accesses[0].Stack[0].Func)
		}
		return s
	}
	for _, c := range []struct {
		what string
		got  []string
		want string
	}{
		{"new", names(d.New), "[php_mysqlnd_rowp_read helper]"},
		{"new elsewhere", names(d.NewElsewhere), "[spl_thing]"},
		{"both", names(d.Both), "[zend_signal_handler]"},
		{"gone", names(d.Gone), "[old_race]"},
	} {
		if fmt.Sprint(c.got) != c.want {
			t.Errorf("%s = %v, want %s", c.what, c.got, c.want)
		}
	}
	if d.Clean() {
		t.Error("a new race in ext/mysqlnd reads as clean")
	}
	if !CompareRaces([]Report{shared}, []Report{shared, elsewhere}, Scope{Dirs: DefaultDirs}).Clean() {
		t.Error("a race outside the change's code fails the check")
	}
}
