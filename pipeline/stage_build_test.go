package pipeline

import (
	"bytes"
	"testing"
)

// The build heartbeat counts compiler lines of the log, split across
// writes as make's output is, against the Makefile's objects once
// configure has given them.
func TestCompileCounter(t *testing.T) {
	var log bytes.Buffer
	c := &compileCounter{w: &log}
	write := func(s string) {
		t.Helper()
		if n, err := c.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	check := func(want string) {
		t.Helper()
		if got := c.status(); got != want {
			t.Errorf("status = %q, want %q", got, want)
		}
	}

	write("checking if ccache gcc supports -c -o file.o... yes\n")
	check("1 files compiled")
	c.setTotal(3)
	check("0 of 3 files compiled (0%)")
	write("libtool --mode=compile gcc -Imain/ -c main/main.c -o main/mai")
	check("0 of 3 files compiled (0%)")
	write("n.lo\nlibtool --mode=link gcc -o sapi/cli/php\n")
	check("1 of 3 files compiled (33%)")
	write("gcc -c a.c -o a.lo\ngcc -c b.c -o b.lo\n")
	check("3 of 3 files compiled (100%)")
	if want := "checking if ccache gcc supports -c -o file.o... yes\n" +
		"libtool --mode=compile gcc -Imain/ -c main/main.c -o main/main.lo\nlibtool --mode=link gcc -o sapi/cli/php\n" +
		"gcc -c a.c -o a.lo\ngcc -c b.c -o b.lo\n"; log.String() != want {
		t.Errorf("log = %q, want every byte passed through", log.String())
	}
}
