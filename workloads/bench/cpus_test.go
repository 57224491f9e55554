package bench

import (
	"strings"
	"testing"
)

func TestCheckCPUList(t *testing.T) {
	for _, s := range []string{"0", "0,1", "0-3", "0,5,7-11", "0-10:2", "12-12"} {
		if err := CheckCPUList(s); err != nil {
			t.Errorf("CheckCPUList(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range []string{"", "abc;rm", "1-", "-1", "3-1", "0,,2", ",", "1:2", "0-4:0", "0-4:x", "1 2", "+1", "0x1", "1;reboot"} {
		if err := CheckCPUList(s); err == nil {
			t.Errorf("CheckCPUList(%q) = nil, want an error", s)
		}
	}
}

func TestCheckCPUsIn(t *testing.T) {
	usable := []int{0, 1, 2, 3, 8}
	for _, s := range []string{"0", "0-3", "8", "0-2:2,8", "0-8:8"} {
		if err := checkCPUsIn(s, usable); err != nil {
			t.Errorf("checkCPUsIn(%q) = %v, want nil", s, err)
		}
	}
	for _, tt := range []struct{ list, says string }{
		{"4", "CPU 4 is not one"},
		{"0-8", "CPU 4 is not one"},
		{"1,9", "CPU 9 is not one"},
		{"0-1000000000", "CPU 4 is not one"},
		{"3-1", "not a CPU list"},
	} {
		err := checkCPUsIn(tt.list, usable)
		if err == nil || !strings.Contains(err.Error(), tt.says) || !strings.Contains(err.Error(), "0-3,8") && !strings.Contains(err.Error(), "not a CPU list") {
			t.Errorf("checkCPUsIn(%q) = %v, want an error saying %q and the usable 0-3,8", tt.list, err, tt.says)
		}
	}
}
