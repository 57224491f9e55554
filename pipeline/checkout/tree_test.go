package checkout

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
)

func TestWriteTreeRoundTrip(t *testing.T) {
	s := memory.NewStorage()
	files := Files{}
	for _, p := range []string{"README", "ext/mysqlnd/a.c", "ext/mysqlnd/b.h", "ext/mysqli/tests/x.phpt", "main/php_version.h", "ext-foo", "ext/a"} {
		h, err := WriteBlob(s, []byte(p+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		files[p] = Entry{Mode: filemode.Regular, Hash: h}
	}
	root, err := WriteTree(s, files)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := object.GetTree(s, root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Flatten(tree)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(files, got); d != "" {
		t.Errorf("Flatten(WriteTree(files)) mismatch (-want +got):\n%s", d)
	}
}
