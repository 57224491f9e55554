package codediff

import (
	"os"
	"path/filepath"
	"testing"
)

// realBuild returns a PHP build tree with mysqlnd objects: $PATCHPROOF_NTS_BUILD,
// else where the project's scripts build PHP 8.2 NTS, else "".
func realBuild() string {
	for _, d := range []string{os.Getenv("PATCHPROOF_NTS_BUILD"), "/tmp/pp-builds/nts"} {
		if d == "" {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(d, DefaultObjects)); len(m) > 0 {
			return d
		}
	}
	return ""
}

// TestRealBuildSelf compares a real PHP build with itself: every mysqlnd
// function must come out identical.
func TestRealBuildSelf(t *testing.T) {
	dir := realBuild()
	if dir == "" {
		t.Skip("no PHP build with ext/mysqlnd/*.o (set PATCHPROOF_NTS_BUILD)")
	}
	rep, err := CompareDirs(dir, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.AllIdentical() || rep.Compared == 0 {
		t.Errorf("%s: %s, %d changed, %d added, %d removed", dir, rep.Summary(), len(rep.Changed), len(rep.Added), len(rep.Removed))
	}
	t.Logf("%s: %s in %d objects; warnings %q", dir, rep.Summary(), rep.BaseObjects, rep.Warnings)
}

func BenchmarkCompareDirs(b *testing.B) {
	dir := realBuild()
	if dir == "" {
		b.Skip("no PHP build with ext/mysqlnd/*.o (set PATCHPROOF_NTS_BUILD)")
	}
	var rep *Report
	for b.Loop() {
		var err error
		if rep, err = CompareDirs(dir, dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	if !rep.AllIdentical() {
		b.Fatalf("%s compared with itself: %s", dir, rep.Summary())
	}
	b.ReportMetric(float64(rep.Compared), "funcs")
}
