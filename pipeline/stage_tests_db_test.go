package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
)

// globalPHP plays a build's php running run-tests.php whose every test
// changes the server's global state, as mysqli_insert_packet_overflow's
// SET GLOBAL max_allowed_packet does: it sets its build's own value, waits
// until the other build has set its own too (or 20 s), and passes only if
// the server still has its value. Two builds on one server cannot both
// pass; on servers of their own, both do. A test that ran without meeting
// the other build is SKIPPED: the pair did not run at once.
const globalPHP = `#!/bin/sh
while [ "$1" != "-W" ]; do shift; done
status=$2
shift 2
here=$(dirname "$0")
mine=$(cat "$here/PACKET")
meet=$(cat "$here/MEET")
q() { /usr/bin/mariadb --protocol=TCP -h"$MYSQL_TEST_HOST" -P"$MYSQL_TEST_PORT" -u"$MYSQL_TEST_USER" -p"$MYSQL_TEST_PASSWD" -N -B -e "$1"; }
for a in "$@"; do
	for f in "$a"/*.phpt; do
		q "SET GLOBAL max_allowed_packet = $mine" || exit 3
		touch "$meet/$mine-$(basename "$f")"
		met=0
		for _ in $(seq 200); do
			[ "$(ls "$meet" | grep -c -- "-$(basename "$f")\$")" -ge 2 ] && { met=1; break; }
			sleep 0.1
		done
		got=$(q "SELECT @@GLOBAL.max_allowed_packet")
		if [ "$met" = 0 ]; then r=SKIPPED; elif [ "$got" = "$mine" ]; then r=PASSED; else r=FAILED; fi
		printf '%s\t%s/%s\n' "$r" "$PWD" "$f"
	done
done >"$status"
`

func globalBuild(t *testing.T, s side.Side, packet int, meet string) *builders.Build {
	t.Helper()
	dir := t.TempDir()
	for p, content := range map[string]string{
		"run-tests.php":              "<?php",
		"sapi/cli/php":               globalPHP,
		"sapi/cli/PACKET":            fmt.Sprint(packet),
		"sapi/cli/MEET":              meet,
		"ext/mysqli/tests/CONFLICTS": "mysql\n",
		"ext/mysqli/tests/a.phpt":    "--TEST--\na\n",
		"ext/mysqli/tests/b.phpt":    "--TEST--\nb\n",
	} {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &builders.Build{Label: "PHP-8.2 " + string(s) + "/nts", Side: s, Variant: builders.NTS, OK: true, Dir: dir, PHP: filepath.Join(dir, "sapi/cli/php")}
}

// Two builds' suites run at once, each changing the server's global state:
// each build has a server of its own, so neither sees the other's change.
// The probe itself is shown to catch the cross-talk of one shared server.
func TestSuitesAtOnceDoNotShareAServer(t *testing.T) {
	needMariaDB(t)
	if _, err := exec.LookPath("/usr/bin/mariadb"); err != nil {
		t.Skip("needs the mariadb client (apt-get install mariadb-client)")
	}
	meet := t.TempDir()
	r, progress := newTestRun(t, Config{Variants: []builders.Variant{builders.NTS}, SuiteJobs: 2, Getenv: os.Getenv})
	r.ctx = t.Context()
	base, head := globalBuild(t, side.Base, 4<<20, meet), globalBuild(t, side.Head, 8<<20, meet)
	r.Targets = []*Target{{Name: "PHP-8.2", Builds: []*builders.Build{base, head}, Result: &results.TargetResult{Name: "PHP-8.2"}}}

	if err := (testsStage{}).Run(t.Context(), r); err != nil {
		t.Fatalf("tests stage: %v\n%s", err, progress)
	}
	tr := r.Targets[0].Result.Tests
	if tr == nil || len(tr.Runs) != 2 {
		t.Fatalf("tests result %+v", tr)
	}
	for _, run := range tr.Runs {
		if run.Counts.Total != 2 || run.Counts.Pass != 2 {
			t.Errorf("%s: %+v, want both tests passed (a skip: the builds did not run at once)", run.Build, run.Counts)
		}
	}
	if !strings.Contains(progress.String(), "a MariaDB each (2 servers)") {
		t.Errorf("the stage does not say each build had a server:\n%s", progress)
	}
	if len(r.db.extra) != 0 {
		t.Errorf("%d extra servers still running after the stage", len(r.db.extra))
	}

	// The same two suites at once against one server: a build's change
	// is seen by the other, and the probe says so.
	db, err := r.Database(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	shared := t.TempDir()
	a, b := globalBuild(t, side.Base, 4<<20, shared), globalBuild(t, side.Head, 8<<20, shared)
	var wg sync.WaitGroup
	statuses := make([]string, 2)
	for i, build := range []*builders.Build{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status := filepath.Join(t.TempDir(), "status.txt")
			cmd := exec.CommandContext(context.Background(), build.PHP, "run-tests.php", "-W", status, "ext/mysqli/tests")
			cmd.Dir = build.Dir
			c := db.LocalConn()
			cmd.Env = []string{"PATH=/usr/bin:/bin", "MYSQL_TEST_HOST=" + c.Host, fmt.Sprintf("MYSQL_TEST_PORT=%d", c.Port), "MYSQL_TEST_USER=" + c.User, "MYSQL_TEST_PASSWD=" + c.Password}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Errorf("fake suite on one server: %v: %s", err, out.String())
			}
			got, _ := os.ReadFile(status)
			statuses[i] = string(got)
		}()
	}
	wg.Wait()
	all := strings.Join(statuses, "")
	if strings.Count(all, "FAILED") < 2 || strings.Contains(all, "SKIPPED") {
		t.Errorf("on one shared server the probe saw no cross-talk (want a failure a test):\n%s", all)
	}
}
