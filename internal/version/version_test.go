package version

import (
	"runtime/debug"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"tagged", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"work tree", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "27c1140aabbccddeeff00112233445566778899a"}, {Key: "vcs.modified", Value: "false"},
		}}, "(devel) 27c1140aabbc"},
		{"dirty", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "27c1140aabbccddeeff00112233445566778899a"}, {Key: "vcs.modified", Value: "true"},
		}}, "(devel) 27c1140aabbc+dirty"},
		{"no version", debug.BuildInfo{}, "(devel)"},
	} {
		if got := format(&c.info); got != c.want {
			t.Errorf("%s: format = %q, want %q", c.name, got, c.want)
		}
	}
	if String() == "" {
		t.Error("String() is empty")
	}
}
