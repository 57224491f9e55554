package checkout

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChangedFiles(t *testing.T) {
	tr := newTestRepo(t)
	r, err := Open(context.Background(), tr.dir, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tt := range []struct {
		name       string
		base, head [20]byte
		want       []string
	}{
		{"the change", tr.c1, tr.f1, []string{"ext/mysqlnd/mysqlnd_statistics.h"}},
		{"the branch and the change", tr.c2, tr.f1, []string{"NEWS", "ext/mysqlnd/mysqlnd_statistics.h"}},
		{"nothing", tr.c1, tr.c1, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.ChangedFiles(tt.base, tt.head)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ChangedFiles (-want +got):\n%s", diff)
			}
		})
	}
}
