package httpd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/workloads/httpd/httpdtest"
)

// A build with OPcache has modules/opcache.so beside libs/; a server
// loads it with production's settings, before the caller's INI (which may
// override them), and a container binds its directory.
func TestOPcache(t *testing.T) {
	dir := t.TempDir()
	module := filepath.Join(dir, "libs", "libphp.so")
	os.MkdirAll(filepath.Dir(module), 0o755)
	os.WriteFile(module, nil, 0o644)
	if got := OPcacheModule(module); got != "" {
		t.Errorf("a build without modules/: OPcache %q", got)
	}
	so := filepath.Join(dir, "modules", "opcache.so")
	os.MkdirAll(filepath.Dir(so), 0o755)
	os.WriteFile(so, nil, 0o644)
	if got := OPcacheModule(module); got != so {
		t.Errorf("OPcacheModule = %q, want %q", got, so)
	}
	ini := string(iniText(map[string]string{"opcache.enable": "0"}, so, "/run/x"))
	for _, want := range []string{
		`zend_extension = "` + so + `"` + "\n", "opcache.enable = 1\n", "opcache.validate_timestamps = 0\n",
		"opcache.memory_consumption = 128\n", `opcache.lockfile_path = "/run/x"` + "\n",
	} {
		if !strings.Contains(ini, want) {
			t.Errorf("php.ini lacks %q:\n%s", want, ini)
		}
	}
	if strings.Index(ini, "opcache.enable = 0") < strings.Index(ini, "opcache.enable = 1") {
		t.Errorf("the caller's INI comes before OPcache's settings, which would override it:\n%s", ini)
	}
	s := &Server{Dir: "/run/x", opcache: so, opt: Options{Module: module}}
	ctr := &Container{Image: "i", Network: "n"}
	found := false
	for _, b := range s.spec(ctr).Binds {
		found = found || (b.Path == filepath.Dir(so) && b.ReadOnly)
	}
	if !found {
		t.Errorf("the container does not bind %s read-only: %+v", filepath.Dir(so), s.spec(ctr).Binds)
	}

	// The tree under test's links are not followed: a modules/ that
	// points elsewhere is no OPcache (a container would bind what it
	// points to).
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "opcache.so"), nil, 0o644)
	linked := filepath.Join(t.TempDir(), "b")
	os.MkdirAll(filepath.Join(linked, "libs"), 0o755)
	os.Symlink(other, filepath.Join(linked, "modules"))
	if got := OPcacheModule(filepath.Join(linked, "libs", "libphp.so")); got != "" {
		t.Errorf("modules/ a link: OPcache %q, want none", got)
	}
}

// OPcacheState states OPcache for every build alike, and names the builds
// with it and without it.
func TestOPcacheState(t *testing.T) {
	with, without := httpdtest.Build(t, true), httpdtest.Build(t, false)
	for _, tc := range []struct {
		base, head    string
		want          string
		with, without []string
	}{
		{with, with, "on: " + OPcacheSettings(), []string{"base", "head"}, nil},
		{without, without, "off: the builds have no OPcache", nil, []string{"base", "head"}},
		{with, without, "on for base only: head's build has none", []string{"base"}, []string{"head"}},
		{without, with, "on for head only: base's build has none", []string{"head"}, []string{"base"}},
	} {
		got, have, lack := OPcacheState(Named{"base", tc.base}, Named{"head", tc.head})
		if !strings.HasPrefix(got, tc.want) || !slices.Equal(have, tc.with) || !slices.Equal(lack, tc.without) {
			t.Errorf("OPcacheState = %q, %q, %q; want %q…, %q, %q", got, have, lack, tc.want, tc.with, tc.without)
		}
	}
	if !strings.Contains(OPcacheSettings(), "opcache.file_update_protection=0") {
		t.Errorf("the settings omit file_update_protection: %s", OPcacheSettings())
	}
}
