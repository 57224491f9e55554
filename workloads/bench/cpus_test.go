package bench

import "testing"

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
