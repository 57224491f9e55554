package pipeline

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/safefs/safefstest"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/verdict"
)

const confinedSource = "int php_api(int x) { return x * 3; }\nint php_other(int x) { return x - 1; }\n"

// writeFile writes b at dir/rel, a hole after it up to sparse bytes.
func writeFile(t *testing.T, dir, rel string, b []byte, sparse int64) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	safefstest.Sparse(t, p, b, max(sparse, int64(len(b))))
	return p
}

// Head's build with an object whose .text claims 3 GiB of a sparse file
// fails the target's machine-code check, no-op expected or not: it is no
// comparison that could not run, and no pass.
func TestCodeDiffStageRejectsHead(t *testing.T) {
	obj := safefstest.Compile(t, confinedSource, "-O2", "-fpic")
	base, head := t.TempDir(), t.TempDir()
	writeFile(t, base, "ext/mysqlnd/m.o", obj, 0)
	writeFile(t, head, "ext/mysqlnd/m.o", safefstest.SetSectionSize(t, obj, ".text", 3<<30), 3<<30+1<<20)
	r, _ := newTestRun(t, Config{ExpectNTSNoop: false})
	r.Targets = []*Target{{Name: "PHP-8.4", Result: &results.TargetResult{Name: "PHP-8.4"}, Builds: []*builders.Build{
		{Side: "base", Variant: builders.NTS, OK: true, Dir: base},
		{Side: "head", Variant: builders.NTS, OK: true, Dir: head},
	}}}
	err := codediffStage{}.Run(context.Background(), r)
	if !errors.Is(err, verdict.ErrCheckFailed) || !strings.Contains(err.Error(), "PHP-8.4: nts: head's objects rejected") {
		t.Fatalf("Run = %v, want the target's failure", err)
	}
	res := r.Targets[0].Result.CodeDiff
	if res == nil || len(res.Rejected) != 1 || len(res.Errors) != 0 || !strings.Contains(res.Rejected[0], "section .text: 3221225472 bytes") {
		t.Fatalf("codediff result %+v, want head's rejection naming .text", res)
	}
	if got := res.Cell(); got != verdict.Failed.Icon()+" head's objects rejected" {
		t.Errorf("cell %q", got)
	}
}

// Head's ThreadSanitizer build whose php claims a .text of 3 GiB fails
// the target's ABI check on a stable branch; base's is a check that
// could not run.
func TestABIStageRejectsHead(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	tree := abiTree(t, "struct st_stats { int a; };\n")
	php := filepath.Join(tree, "sapi/cli/php")
	if out, err := exec.Command(gcc, "-g", "-rdynamic", "-o", php, filepath.Join(tree, "sapi/cli/php_cli.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	good, err := os.ReadFile(php)
	if err != nil {
		t.Fatal(err)
	}
	bad := writeFile(t, t.TempDir(), "php", safefstest.SetSectionSize(t, good, ".text", 3<<30), 3<<30+1<<20)
	for _, tt := range []struct {
		name       string
		base, head string
		failed     bool
	}{
		{"head's", php, bad, true},
		{"base's", bad, php, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newTestRun(t, Config{Variants: []builders.Variant{builders.ZTS}})
			r.Targets = []*Target{{Name: "PHP-8.4", BaseTree: tree, HeadTree: tree, Result: &results.TargetResult{Name: "PHP-8.4"}, Builds: []*builders.Build{
				{Side: "base", Variant: builders.TSan, OK: true, Dir: tree, PHP: tt.base},
				{Side: "head", Variant: builders.TSan, OK: true, Dir: tree, PHP: tt.head},
			}}}
			err := abiStage{}.Run(context.Background(), r)
			if err == nil || errors.Is(err, verdict.ErrCheckFailed) != tt.failed || !strings.Contains(err.Error(), "section .text: 3221225472 bytes") {
				t.Fatalf("Run = %v, want a failure of the target: %v", err, tt.failed)
			}
			res := r.Targets[0].Result.ABI
			if res == nil || (len(res.Rejected) == 1) != tt.failed || (len(res.Errors) == 1) == tt.failed {
				t.Errorf("ABI result %+v, want head's rejection: %v", res, tt.failed)
			}
		})
	}
}
