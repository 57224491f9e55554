package childenv

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// secrets are what a CI job's environment may hold besides its tokens;
// each reached configure, mariadbd, run-tests.php or Apache when this
// package was a deny list. No kind of child gets any of them.
var secrets = []string{
	"GITHUB_TOKEN=ghp_x", "GH_TOKEN=ghp_y", "github_token=lower", "ACTIONS_RUNTIME_TOKEN=a",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN=b", "ACTIONS_ID_TOKEN_REQUEST_URL=https://x", "ACTIONS_CACHE_URL=https://c",
	"GPG_PASSPHRASE=correct horse", "MYSQL_PWD=hunter2", "DEPLOY_APIKEY=k", "SIGNING_KEYS=-----BEGIN",
	"NPM_AUTH=dXNlcjpwYXNz", "CI_JOB_JWT=eyJ", "AWS_SECRET_ACCESS_KEY=s", "GOOGLE_APPLICATION_CREDENTIALS=/c.json",
	"DATABASE_URL=mysql://app:s3cret@db.internal:3306/app", "REDIS_URL=redis://:s3cret@cache:6379",
	"HTTPS_PROXY=http://proxyuser:s3cret@proxy.internal:3128", "http_proxy=proxyuser:s3cret@proxy.internal:3128",
	"https_proxy=http://ghp_tokenAsUser@proxy.internal:3128",
	"DOCKER_HOST=unix:///var/run/docker.sock", "DOCKER_CERT_PATH=/certs", "SSH_AUTH_SOCK=/tmp/agent",
	"PATCHPROOF_GITHUB_API=https://api", "PATCHPROOF_CACHE=/c", "GITHUB_WORKSPACE=/w", "RUNNER_TEMP=/t", "INPUT_PR=1",
}

// steering are harmless by name but would change what a child does:
// the compiler and its flags are patchproof's to set, the tests' and
// PHP's settings the suites'.
var steering = []string{
	"CC=clang", "CFLAGS=-O0", "LDFLAGS=-Wl,-z,now", "CCACHE_DIR=/host/ccache", "PHPRC=/etc/php", "PHP_INI_SCAN_DIR=/x",
	"MYSQL_TEST_HOST=elsewhere", "TEST_PHP_ARGS=-j8", "LD_PRELOAD=/evil.so", "LD_LIBRARY_PATH=/opt/lib", "GIT_SSH_COMMAND=ssh -i k",
}

// kept are the variables the table allows, each with the kinds that get it.
var kept = []struct {
	kv    string
	kinds []Kind
}{
	{"PATH=/usr/local/bin:/usr/bin:/bin", everyKind},
	{"HOME=/home/runner", everyKind},
	{"USER=runner", everyKind},
	{"LOGNAME=runner", everyKind},
	{"LANG=C.UTF-8", everyKind},
	{"LC_ALL=C", everyKind},
	{"LC_MESSAGES=C", everyKind},
	{"TZ=UTC", everyKind},
	{"TMPDIR=/tmp/x", []Kind{Tool, Build, Database, WebServer, Fetch}},
	{"RUNNER_TRACKING_ID=github_4f2c", everyKind},
	{OwnerVar + "=host/12/345", everyKind},
	{"https_proxy=http://proxy.internal:3128", network},
	{"HTTP_PROXY=http://proxy.internal:3128/", network},
	{"no_proxy=localhost,127.0.0.1", network},
}

func TestClean(t *testing.T) {
	var environ []string
	environ = append(environ, secrets...)
	environ = append(environ, steering...)
	for _, k := range kept {
		environ = append(environ, k.kv)
	}
	environ = append(environ, "NOEQUALS", "EMPTY=")
	for _, k := range everyKind {
		t.Run(k.String(), func(t *testing.T) {
			var want []string
			for _, kv := range kept {
				for _, kk := range kv.kinds {
					if kk == k {
						want = append(want, kv.kv)
					}
				}
			}
			if d := cmp.Diff(want, Clean(k, environ)); d != "" {
				t.Errorf("Clean(%v) (-want +got):\n%s", k, d)
			}
		})
	}
}

// Every variable above is absent from every kind's environment, however
// many of them there are and in whatever order: a check by name, so that
// a failure names the variable.
func TestNoSecretReachesAnyChild(t *testing.T) {
	for _, k := range everyKind {
		for _, kv := range append(append([]string{}, secrets...), steering...) {
			t.Run(fmt.Sprintf("%v/%s", k, kv), func(t *testing.T) {
				if got := Clean(k, []string{"PATH=/bin", kv}); len(got) != 1 || got[0] != "PATH=/bin" {
					t.Errorf("Clean(%v, %q) = %q", k, kv, got)
				}
			})
		}
	}
}

func TestHasCredentials(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{
		{"http://proxy:3128", false},
		{"http://proxy:3128/path@x", false},
		{"http://u:p@proxy:3128", true},
		{"http://token@proxy:3128", true},
		{"mysql://u:p@h/db", true},
		{"a,http://ok b,https://u:p@bad", true},
		{"u:p@proxy:3128", true},
		{"me@corp.example", false},
		{"/home/me@corp", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			if got := HasCredentials(tt.value); got != tt.want {
				t.Errorf("HasCredentials(%q) = %v, want %v", tt.value, got, tt.want)
			}
		})
	}
}

// A container takes nothing of patchproof's environment.
func TestContainerTakesNothing(t *testing.T) {
	for _, kv := range secrets {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	want := []string{"HOME=/tmp", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if d := cmp.Diff(want, Container()); d != "" {
		t.Errorf("Container (-want +got):\n%s", d)
	}
}

// For reads this process's environment.
func TestFor(t *testing.T) {
	t.Setenv("GPG_PASSPHRASE", "correct horse")
	t.Setenv("LC_TIME", "C")
	got := strings.Join(For(Build), "\n")
	if strings.Contains(got, "GPG_PASSPHRASE") || !strings.Contains(got, "LC_TIME=C") {
		t.Errorf("For(Build) = %s", got)
	}
}
