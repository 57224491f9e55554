package proc

import (
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStart(t *testing.T) {
	for _, tt := range []struct {
		stat    string
		want    uint64
		wantErr bool
	}{
		{stat: "1234 (patchproof) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 8 0 987654 1000000 500", want: 987654},
		// A command name may hold spaces and parentheses.
		{stat: "1234 (a) b (c) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 8 0 42 1000000 500", want: 42},
		{stat: "1234 (short) S 1 2", wantErr: true},
		{stat: "garbage", wantErr: true},
	} {
		got, err := parseStart(tt.stat)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseStart(%q) = %d, %v; want %d, error %v", tt.stat, got, err, tt.want, tt.wantErr)
		}
	}
}

// An owner is gone when its PID is free or reused, and never when it is of
// another host: a later run removes only what a dead run of its own host
// left.
func TestOwnerGone(t *testing.T) {
	if self.Start == 0 {
		t.Fatal("this process's start time is unknown")
	}
	got, err := ParseOwner(self.String())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(self, got); d != "" {
		t.Errorf("owner round trip (-want +got):\n%s", d)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	for _, tt := range []struct {
		name string
		o    Owner
		gone bool
	}{
		{"this process", self, false},
		{"this PID, another start", Owner{Host: self.Host, PID: os.Getpid(), Start: self.Start + 1}, true},
		{"an ended process", Owner{Host: self.Host, PID: dead, Start: 1}, true},
		{"another host's", Owner{Host: self.Host + "-other", PID: dead, Start: 1}, false},
	} {
		if got := tt.o.Gone(); got != tt.gone {
			t.Errorf("%s: Gone = %v, want %v", tt.name, got, tt.gone)
		}
	}
	for _, bad := range []string{"", "host/1", "host/x/1", "host/0/1", "host/1/-1"} {
		if _, err := ParseOwner(bad); err == nil {
			t.Errorf("ParseOwner(%q): no error", bad)
		}
	}
}
