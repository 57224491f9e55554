package codediff

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/golden"
)

func TestListing(t *testing.T) {
	code := []byte{
		0x55,                         // push %rbp
		0x06,                         // not an instruction in 64-bit mode
		0xe8, 0x00, 0x00, 0x00, 0x00, // call, patched by a relocation
		0xe8, 0xf4, 0xff, 0xff, 0xff, // call back to the start: within the function
		0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00, // lea past the end: resolved by the assembler
		0xc3, // ret
		0x0f, // an opcode cut off by the function's end
	}
	fn := &function{name: "f", code: code, insts: decode(code), refs: []ref{
		{off: 3, size: 4, kind: "R_X86_64_PLT32", target: "foo"},
		{off: 15, size: 4, kind: kindPCRel, target: "helper"},
	}}
	var got []string
	for _, e := range fn.listing() {
		for _, l := range e {
			got = append(got, l.render())
		}
	}
	want := []string{
		"     0:  push   %rbp",
		"     1:  .byte  0x06",
		"     2:  callq  foo",
		"     3:          R_X86_64_PLT32  foo",
		"     7:  callq  0x0",
		"     c:  lea    helper,%rax",
		"     f:          pc-relative     helper",
		"    13:  retq",
		"    14:  .byte  0x0f",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
}

// sampleReport has one of everything a report can hold.
func sampleReport() *Report {
	return &Report{
		Objects:     DefaultObjects,
		BaseDir:     "/builds/base-nts",
		HeadDir:     "/builds/head-nts",
		BaseObjects: 22,
		HeadObjects: 23,
		Compared:    3,
		Identical:   2,
		Changed: []FuncDiff{{
			Object:   "ext/mysqlnd/mysqlnd_statistics.o",
			Name:     "mysqlnd_stats_init",
			BaseSize: 136,
			HeadSize: 140,
			Diff: `--- base/ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init
+++ head/ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init
@@ -1,4 +1,4 @@
      0:  push   %rbx
-     1:  lea    (%rip),%rdi
-     4:          R_X86_64_PC32   "old"
+     1:  lea    (%rip),%rdi
+     4:          R_X86_64_PC32   "new"
      8:  retq
`,
		}},
		Added:    []Func{{Object: "ext/mysqlnd/mysqlnd_new.o", Name: "mysqlnd_new", Size: 32}},
		Removed:  []Func{},
		Warnings: []string{"head: ext/mysqlnd/mysqlnd_new.o: function f has no size; took 16 bytes up to the next symbol"},
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().Markdown(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report.md"), b.Bytes())
}

// TestJSON pins the field names: they are part of results.json.
func TestJSON(t *testing.T) {
	b, err := json.MarshalIndent(sampleReport(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report.json"), append(b, '\n'))
}

func TestMarkdownCapsLongDiffs(t *testing.T) {
	r := sampleReport()
	r.Changed[0].Diff = strings.Repeat("+     0:  nop\n", maxDiffLines+5)
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), "nop\n"); got != maxDiffLines {
		t.Errorf("%d diff lines rendered, want %d", got, maxDiffLines)
	}
	if !strings.Contains(b.String(), "5 more lines in results.json") {
		t.Errorf("no note of the cut lines:\n%s", b.String())
	}
}
