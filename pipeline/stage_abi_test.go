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
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Without successful builds of both sides there is nothing to compare:
// the stage says so instead of passing.
func TestABIStageSkipsWithoutBuilds(t *testing.T) {
	r, _ := newTestRun(t, Config{Variants: []builders.Variant{builders.NTS, builders.ZTS}})
	r.Targets = []*Target{{Name: "PHP-8.2", Builds: []*builders.Build{
		{Side: "base", Variant: builders.NTS, OK: true}, {Side: "head", Variant: builders.NTS, OK: false},
		{Side: "base", Variant: builders.ZTS, OK: false}, {Side: "head", Variant: builders.ZTS, OK: true},
		{Side: "base", Variant: builders.TSan, OK: true}, {Side: "head", Variant: builders.TSan, OK: false},
	}}}
	err := abiStage{}.Run(context.Background(), r)
	var skip *SkipError
	if !errors.As(err, &skip) || !strings.Contains(skip.Reason, "no successful NTS or ZTS builds") {
		t.Errorf("Run = %v, want a skip that says why", err)
	}
}

// TSan builds whose binaries cannot be read are an error of the stage
// (exit 2), never an "ABI unchanged", and the target's result says so.
func TestABIStageUnreadableBuilds(t *testing.T) {
	r, _ := newTestRun(t, Config{Variants: []builders.Variant{builders.NTS, builders.ZTS}})
	dir := t.TempDir()
	r.Targets = []*Target{{Name: "PHP-8.4", BaseTree: dir, HeadTree: dir, Result: &results.TargetResult{Name: "PHP-8.4"}, Builds: []*builders.Build{
		{Side: "base", Variant: builders.TSan, OK: true, Dir: dir, PHP: dir + "/sapi/cli/php"},
		{Side: "head", Variant: builders.TSan, OK: true, Dir: dir, PHP: dir + "/sapi/cli/php"},
	}}}
	err := abiStage{}.Run(context.Background(), r)
	if err == nil || errors.Is(err, verdict.ErrCheckFailed) {
		t.Fatalf("Run = %v, want an error that is no check failure", err)
	}
	res := r.Targets[0].Result.ABI
	if res == nil || len(res.Errors) == 0 || len(res.Variants) != 0 {
		t.Errorf("ABI result %+v, want the error and no variant", res)
	}
	if !strings.Contains(res.Cell(), "not compared") {
		t.Errorf("cell %q does not say NTS was not compared", res.Cell())
	}
}

// abiTree is a crafted php-src build for the header probe: installed
// headers with API numbers, mysqlnd's statistics struct (stats, whose
// mutex only ZTS has in php-src), and a php binary exporting a function.
func abiTree(t *testing.T, stats string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"configure.ac":                  "PHP_INSTALL_HEADERS([Zend/ main/])\n",
		"ext/mysqlnd/config9.m4":        "PHP_INSTALL_HEADERS([ext/mysqlnd/])\n",
		"main/php_config.h":             "/* #undef ZTS */\n",
		"main/php.h":                    "#ifndef PHP_H\n#define PHP_H\n#include \"php_config.h\"\n#include <stdint.h>\n#define PHP_API_VERSION 20220829\n#endif\n",
		"Zend/zend_modules.h":           "#define ZEND_MODULE_API_NO 20220829\n",
		"Zend/zend_extensions.h":        "#define ZEND_EXTENSION_API_NO 420220829\n",
		"ext/mysqlnd/mysqlnd_structs.h": stats,
		"sapi/cli/php_cli.c":            "int php_api(void) { return 1; }\nint main(void) { return php_api() - 1; }\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("gcc", "-rdynamic", "-o", filepath.Join(dir, "sapi/cli/php"), filepath.Join(dir, "sapi/cli/php_cli.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return dir
}

// NTS builds, which have no debug info, are compared through header
// probes: a change of what only ZTS compiles leaves NTS's ABI unchanged, a
// change of what NTS compiles breaks it and fails a stable branch.
func TestABIStageProbesNTS(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	const base = "struct st_stats { uint64_t *values;\n#ifdef ZTS\n void *LOCK_access;\n#endif\n};\n"
	tests := []struct {
		name, head string
		wantCell   string
		wantFail   bool
	}{
		{"a ZTS-only change", "struct st_stats { uint64_t *values; };\n", "✅ nts: ABI unchanged", false},
		{"an NTS change", "struct st_stats { uint64_t *values; int count; };\n", "❌ nts: 2 ABI breaks", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newTestRun(t, Config{Variants: []builders.Variant{builders.NTS}})
			baseDir, headDir := abiTree(t, base), abiTree(t, tt.head)
			r.Targets = []*Target{{Name: "PHP-8.4", BaseTree: baseDir, HeadTree: headDir, Result: &results.TargetResult{Name: "PHP-8.4"}, Builds: []*builders.Build{
				{Label: "PHP-8.4 base/nts", Side: "base", Variant: builders.NTS, OK: true, Dir: baseDir, PHP: baseDir + "/sapi/cli/php"},
				{Label: "PHP-8.4 head/nts", Side: "head", Variant: builders.NTS, OK: true, Dir: headDir, PHP: headDir + "/sapi/cli/php"},
			}}}
			err := abiStage{}.Run(context.Background(), r)
			if got := errors.Is(err, verdict.ErrCheckFailed); got != tt.wantFail || (err != nil && !got) {
				t.Fatalf("Run = %v, want a check failure: %v", err, tt.wantFail)
			}
			res := r.Targets[0].Result.ABI
			if res == nil || len(res.Variants) != 1 {
				t.Fatalf("ABI result %+v, want one variant", res)
			}
			v := res.Variants[0]
			if v.Name != "nts" || v.Layouts != layoutsProbe || v.ProbeMS <= 0 || v.Symbols == 0 {
				t.Errorf("variant %+v, want nts from header probes, timed, with php's symbols", v)
			}
			if got := res.Cell(); got != tt.wantCell {
				t.Errorf("cell %q, want %q", got, tt.wantCell)
			}
			for _, s := range []string{"base", "head"} {
				if _, err := os.Stat(filepath.Join(r.Dir, "abi", "PHP-8.4", s+"-nts", "probe.o")); err != nil {
					t.Errorf("the %s probe's object: %v", s, err)
				}
			}
		})
	}
}
