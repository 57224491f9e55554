package childenv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClean(t *testing.T) {
	kept := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/runner", "LANG=C.UTF-8", "LC_ALL=C", "TMPDIR=/tmp/x",
		"CC=gcc", "CFLAGS=-O2", "CCACHE_DIR=/cache/ccache", "CCACHE_BASEDIR=/tmp/b", "USER=runner", "TERM=xterm",
		"MONKEY=banana", "KEYBOARD=us", "EMPTY=", "NOEQUALS",
	}
	dropped := []string{
		"GITHUB_TOKEN=ghp_x", "GH_TOKEN=ghp_y", "GITHUB_WORKSPACE=/w", "GITHUB_STEP_SUMMARY=/s",
		"ACTIONS_RUNTIME_TOKEN=a", "ACTIONS_ID_TOKEN_REQUEST_URL=https://x", "ACTIONS_CACHE_URL=https://c",
		"RUNNER_TEMP=/t", "RUNNER_TOOL_CACHE=/tc", "INPUT_PR=1",
		"NPM_TOKEN=n", "CI_JOB_TOKEN=j", "MY_SECRET=s", "DB_PASSWORD=p", "MYSQL_PWD_PASSWD=p", "GOOGLE_APPLICATION_CREDENTIALS=/c.json",
		"API_KEY=k", "AWS_ACCESS_KEY_ID=AKIA", "AWS_SECRET_ACCESS_KEY=s", "AWS_SESSION_TOKEN=t", "github_token=lower",
		"DOCKER_HOST=unix:///var/run/docker.sock", "DOCKER_CERT_PATH=/certs", "SSH_AUTH_SOCK=/tmp/agent",
		"PATCHPROOF_GITHUB_API=https://api", "PATCHPROOF_CACHE=/c",
	}
	got := Clean(append(append([]string{}, dropped...), kept...))
	if d := cmp.Diff(kept, got); d != "" {
		t.Errorf("Clean (-want +got):\n%s", d)
	}
}

// The run's mark reaches children, although it is one of patchproof's own
// variables: it is how what they leave behind is found.
func TestOwnerMarkIsKept(t *testing.T) {
	if Drop(OwnerVar) {
		t.Errorf("%s is dropped", OwnerVar)
	}
	if !Drop("PATCHPROOF_OWNER_TOKEN") || !Drop("PATCHPROOF_CACHE") {
		t.Error("other PATCHPROOF_ variables must still be dropped")
	}
}
