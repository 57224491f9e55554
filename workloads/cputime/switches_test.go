package cputime

import (
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSwitches(t *testing.T) {
	status := "Name:\tapache2\nThreads:\t1\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t7\n"
	got, err := parseSwitches([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Switches{150, 7}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseSwitches([]byte("Name:\tx\n")); err == nil {
		t.Error("a status without switch counts: no error")
	}
}

func TestParseProcStat(t *testing.T) {
	b := []byte("cpu  100 5 50 800 10 1 2 30 40 0\ncpu0 50 2 25 400 5 1 1 15 20 0\n")
	got, err := parseProcStat(b)
	if err != nil {
		t.Fatal(err)
	}
	// Guest time (40) is inside user already.
	if diff := cmp.Diff(System{Ticks: 998, Steal: 30}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseProcStat([]byte("intr 1 2\n")); err == nil {
		t.Error("no cpu line: no error")
	}
	before, after := System{Ticks: 1000, Steal: 10}, System{Ticks: 1200, Steal: 30}
	if got := StealShare(before, after); got != 0.1 {
		t.Errorf("steal share %v, want 0.1", got)
	}
}

func TestParsePressure(t *testing.T) {
	d, ok := parsePressureSome([]byte("some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	if !ok || d != 123456*time.Microsecond {
		t.Errorf("got %v %v", d, ok)
	}
	if _, ok := parsePressureSome([]byte("")); ok {
		t.Error("empty pressure file read as a value")
	}
}

// A shell that sleeps in a child, over and over, blocks every time: the
// tree's voluntary switches grow, the shell's own and its children's.
func TestTreeSwitches(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do sleep 0.01; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	time.Sleep(50 * time.Millisecond)
	s0, err := TreeSwitches(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	s1, err := TreeSwitches(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if d := s1.Sub(s0); d.Voluntary < 5 {
		t.Errorf("%d voluntary switches in 300 ms of sleeps, want several", d.Voluntary)
	}
	if _, err := TreeSwitches(1 << 30); err == nil {
		t.Error("a process that does not exist: no error")
	}
	sys, err := ReadSystem()
	if err != nil {
		t.Fatal(err)
	}
	if sys.Ticks <= 0 {
		t.Errorf("no CPU ticks: %+v", sys)
	}
}
