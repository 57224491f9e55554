package callgrind

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestDumpsCutAtMarker(t *testing.T) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Skip("valgrind not installed")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "phases")
	if out, err := exec.Command("gcc", "-O1", "-o", bin, filepath.Join("testdata", "phases.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	if err := PrepareDir(out); err != nil {
		t.Fatal(err)
	}
	const n = 200000
	args := append(Wrap("", out), bin, "200000")
	if b, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ds, err := WaitDumps(ctx, out, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range ds {
		if d.Seq != i+1 || d.PID == 0 || d.Trigger != "--dump-before=usleep" {
			t.Errorf("dump %d: %+v", i, d)
		}
	}
	// Phase 2 and 3 hold 2n and 3n iterations plus the same glue: their
	// difference is n iterations, as is phase 1 apart from start-up.
	per := float64(ds[2].Instructions-ds[1].Instructions) / n
	if per < 3 || per > 20 {
		t.Errorf("%.2f instructions an iteration (dumps %d, %d, %d)", per, ds[0].Instructions, ds[1].Instructions, ds[2].Instructions)
	}
	if d := float64(ds[1].Instructions) - 2*per*n; d < 0 || d > 0.01*float64(ds[1].Instructions) {
		t.Errorf("phase 2 is %d instructions, want about 2×%.0f", ds[1].Instructions, per*n)
	}
}

func TestReadDumpIncomplete(t *testing.T) {
	p := filepath.Join(t.TempDir(), "callgrind.out.1.1")
	os.WriteFile(p, []byte("# callgrind format\nversion: 1\npid: 1\npart: 1\nevents: Ir\nfn=(1) main\n3 10\n"), 0o644)
	if _, err := ReadDump(p); err == nil {
		t.Fatal("no error for a dump without totals")
	}
	os.WriteFile(p, []byte("# callgrind format\nversion: 1\npid: 7\npart: 2\ndesc: Trigger: --dump-before=usleep\nevents: Ir Dr\nfn=(1) main\n3 10 2\ntotals: 123 45\n"), 0o644)
	d, err := ReadDump(p)
	if err != nil {
		t.Fatal(err)
	}
	if d.Instructions != 123 || d.PID != 7 || d.Seq != 2 || d.Trigger != "--dump-before=usleep" {
		t.Errorf("%+v", d)
	}
}
