package images

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// installed is the packages a Dockerfile's apt-get install lines name.
func installed(t *testing.T, dockerfile []byte) []string {
	t.Helper()
	var pkgs []string
	for _, step := range regexp.MustCompile(`(?s)apt-get install (.*?)&&`).FindAllStringSubmatch(string(dockerfile), -1) {
		for _, f := range strings.Fields(strings.ReplaceAll(step[1], `\`, " ")) {
			if !strings.HasPrefix(f, "-") {
				pkgs = append(pkgs, f)
			}
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("no apt-get install in the recipe")
	}
	return pkgs
}

// A host build needs what the build image has: a -dev library missing on
// the host fails configure there (seen on a fresh Debian: "Package
// 'zlib' … not found") while the Docker builder passes.
func TestHostHasBuildPackages(t *testing.T) {
	lib, err := os.ReadFile("../scripts/lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\nHOST_PACKAGES=\((.*?)\)`).FindSubmatch(lib)
	if m == nil {
		t.Fatal("no HOST_PACKAGES=(…) in scripts/lib.sh")
	}
	host := strings.Fields(string(m[1]))
	for _, p := range installed(t, Build) {
		if !slices.Contains(host, p) {
			t.Errorf("images/build.Dockerfile installs %s, scripts/lib.sh's HOST_PACKAGES does not", p)
		}
	}
	// The serve image's tools are the benchmark's and the race check's on
	// a host too.
	for _, p := range installed(t, Serve) {
		if !slices.Contains(host, p) {
			t.Errorf("images/serve.Dockerfile installs %s, scripts/lib.sh's HOST_PACKAGES does not", p)
		}
	}
}

// Every recipe takes its base as BASE, so that no image is pulled by a
// name of the recipe's own.
func TestRecipesFromBase(t *testing.T) {
	for name, r := range map[string][]byte{"build": Build, "serve": Serve, "mariadb": MariaDB} {
		from := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(string(r), -1)
		if len(from) != 1 || from[0][1] != "${BASE}" {
			t.Errorf("%s: FROM %v, want one FROM ${BASE}", name, from)
		}
		if !regexp.MustCompile(`(?m)^ARG BASE`).Match(r) {
			t.Errorf("%s: no ARG BASE", name)
		}
	}
}
