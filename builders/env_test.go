package builders

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tokens are the secrets of a CI job, set in the test's environment: none
// may reach the code under test.
var tokens = map[string]string{
	"GITHUB_TOKEN":          "ghp_BuildMustNeverSeeThis000000000000001",
	"GH_TOKEN":              "gho_BuildMustNeverSeeThis000000000000002",
	"ACTIONS_RUNTIME_TOKEN": "eyJBuildMustNeverSeeThis000000000000003",
	"GPG_PASSPHRASE":        "BuildMustNeverSeeThis000000000000004",
	"MYSQL_PWD":             "BuildMustNeverSeeThis000000000000005",
	"DEPLOY_APIKEY":         "BuildMustNeverSeeThis000000000000006",
	"DATABASE_URL":          "mysql://app:BuildMustNeverSeeThis000000000000007@db/app",
}

func setTokens(t *testing.T) {
	for k, v := range tokens {
		t.Setenv(k, v)
	}
}

// A pull request's configure and make run with no token in their
// environment: the tree's configure and Makefile write theirs to files.
func TestBuildEnvironmentHasNoTokens(t *testing.T) {
	setTokens(t)
	dumps := t.TempDir()
	t.Setenv("COUNT", filepath.Join(t.TempDir(), "count"))
	src := fakeTree(t, "int main(void) { return 0; }\n")
	configure, _ := os.ReadFile(filepath.Join(src, "configure"))
	configure = []byte(strings.Replace(string(configure), "#!/bin/sh\n", "#!/bin/sh\nenv > '"+dumps+"/configure.env'\n", 1))
	makefile, _ := os.ReadFile(filepath.Join(src, "Makefile"))
	makefile = []byte(strings.Replace(string(makefile), "main.lo: main.c\n", "main.lo: main.c\n\tenv > '"+dumps+"/make.env'\n", 1))
	os.WriteFile(filepath.Join(src, "configure"), configure, 0o755)
	os.WriteFile(filepath.Join(src, "Makefile"), makefile, 0o644)

	b := &Builder{Exec: &Host{}, CacheDir: t.TempDir()}
	// Whether gcc is there or not, configure and make ran.
	b.Build(context.Background(), Spec{Label: "head/nts", Source: src, TreeHash: "env", Variant: NTS, Profile: ProfileMySQL, Jobs: 1})
	for _, step := range []string{"configure", "make"} {
		env, err := os.ReadFile(filepath.Join(dumps, step+".env"))
		if err != nil {
			t.Fatalf("%s did not run: %v", step, err)
		}
		for k, v := range tokens {
			if strings.Contains(string(env), v) || strings.Contains(string(env), k+"=") {
				t.Errorf("%s saw %s", step, k)
			}
		}
		if !strings.Contains(string(env), "PATH=") || !strings.Contains(string(env), "LC_ALL=C") {
			t.Errorf("%s lacks PATH or the build's own LC_ALL:\n%s", step, env)
		}
	}
}

// The Docker builder's containers carry the build's variables and a
// PATH and HOME of their own, nothing of the host's.
func TestContainerEnvironment(t *testing.T) {
	setTokens(t)
	got := containerEnv(Cmd{Env: []string{"LC_ALL=C", "CC=ccache gcc"}})
	want := []string{"HOME=/tmp", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "CC=ccache gcc"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("container environment %q, want %q", got, want)
	}
}

// The same in Docker mode, in a real container.
func TestDockerEnvironmentHasNoTokens(t *testing.T) {
	setTokens(t)
	d := dockerForTest(t, testCache(t))
	var out bytes.Buffer
	_, execErr := d.Exec(context.Background(), Cmd{Args: []string{"env"}, Env: []string{"LC_ALL=C"}, Output: &out})
	if execErr != nil {
		t.Fatal(execErr)
	}
	for k, v := range tokens {
		if strings.Contains(out.String(), v) || strings.Contains(out.String(), k+"=") {
			t.Errorf("the container saw %s", k)
		}
	}
	if !strings.Contains(out.String(), "LC_ALL=C") {
		t.Errorf("the container lacks the build's LC_ALL:\n%s", out.String())
	}
}

// The system a build records is the kernel's, not this host's name: a
// container's build configures the same php_config.h as this host's.
func TestUnameForBuildHasNoHostName(t *testing.T) {
	u := unameForBuild()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u, "Linux ") || strings.Count(u, " ") != 2 || (len(host) > 3 && strings.Contains(u, host)) {
		t.Errorf("unameForBuild() = %q (host %q): want \"Linux RELEASE MACHINE\"", u, host)
	}
}
