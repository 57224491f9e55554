package pipeline

import "testing"

func TestBuildSystemChange(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changed []string
		want    string
	}{
		{"none", nil, ""},
		{"C only", []string{"ext/mysqlnd/mysqlnd_ps.c", "ext/mysqlnd/mysqlnd_ps.h"}, ""},
		{"tests only", []string{"ext/mysqli/tests/gh8978.phpt"}, ""},
		{"config.m4", []string{"ext/mysqlnd/mysqlnd_ps.c", "ext/mysqlnd/config.m4"}, "ext/mysqlnd/config.m4"},
		{"config9.m4", []string{"ext/mysqlnd/config9.m4"}, "ext/mysqlnd/config9.m4"},
		{"configure.ac", []string{"configure.ac"}, "configure.ac"},
		{"Zend.m4", []string{"Zend/Zend.m4"}, "Zend/Zend.m4"},
		{"a build/ script", []string{"build/gen_stub.php"}, "build/gen_stub.php"},
		{"a build/ macro", []string{"build/php.m4"}, "build/php.m4"},
		{"a directory named build elsewhere", []string{"ext/foo/build/x.c"}, ""},
		{"a name ending in m4 without the dot", []string{"ext/foo/form4"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := buildSystemChange(tc.changed); got != tc.want {
				t.Errorf("buildSystemChange(%q) = %q, want %q", tc.changed, got, tc.want)
			}
		})
	}
}
