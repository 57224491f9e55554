package mysqld

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n", want: "10.11.19-MariaDB"},
		{in: "/usr/sbin/mysqld  Ver 8.4.3 for Linux on x86_64 (MySQL Community Server - GPL)", want: "8.4.3"},
		{in: "garbage", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseVersion(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseVersion: err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("parseVersion = %q, want %q", got, tt.want)
			}
		})
	}
}

func needMariaDB(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"mariadbd", "mariadb-install-db"} {
		if _, err := lookTool("", tool); err != nil {
			t.Skipf("MariaDB is not installed (apt-get install mariadb-server): %v", err)
		}
	}
}

// groupGone reports whether no process is left in the process group.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

func TestStartCreateDatabaseStop(t *testing.T) {
	needMariaDB(t)
	dir := t.TempDir()
	var log bytes.Buffer
	s, err := Start(context.Background(), Options{Dir: dir, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	if len(s.Version) > maxVersionLen || !strings.HasSuffix(s.Version, "-MariaDB") {
		t.Errorf("Version = %q, want a short \"x.y.z-MariaDB\"", s.Version)
	}
	if err := s.CreateDatabase(context.Background(), "suite_a"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDatabase(context.Background(), "bad name; DROP"); err == nil {
		t.Error("CreateDatabase accepted an unsafe name")
	}

	// The user logs in over TCP and the socket and uses the database.
	client, _ := lookTool("", "mariadb")
	for _, conn := range [][]string{
		{"--protocol=tcp", "-h", s.Host, "-P", strconv.Itoa(s.Port)},
		{"--protocol=socket", "-S", s.Socket},
	} {
		args := append([]string{"--no-defaults", "-u", s.User, "-p" + s.Password, "--batch", "--skip-column-names"}, conn...)
		args = append(args, "-e", "CREATE TABLE IF NOT EXISTS t (id INT); INSERT INTO t VALUES (1); SELECT VERSION(), @@character_set_server, @@local_infile", "suite_a")
		out, err := exec.Command(client, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("mariadb %v: %v: %s", conn, err, out)
		}
		if want := s.Version + "\tutf8mb4\t1\n"; string(out) != want {
			t.Errorf("mariadb %v: got %q, want %q", conn, out, want)
		}
	}
	// A wrong password is refused: grants are in force.
	out, err := exec.Command(client, "--no-defaults", "-u", s.User, "-pwrong", "-S", s.Socket, "-e", "SELECT 1").CombinedOutput()
	if err == nil {
		t.Errorf("login with a wrong password succeeded: %s", out)
	}

	pgid := s.proc.Pid()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !groupGone(pgid) {
		t.Errorf("process group %d still has processes after Stop", pgid)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	// A second start in the same dir reuses the datadir and the database.
	log.Reset()
	s2, err := Start(context.Background(), Options{Dir: dir, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Stop()
	if strings.Contains(log.String(), "installed") {
		t.Errorf("second Start ran mariadb-install-db again:\n%s", log.String())
	}
	if got, err := s2.query(context.Background(), "suite_a", "SELECT COUNT(*) FROM t"); err != nil || got != "2\n" {
		t.Errorf("rows in suite_a.t after restart: %q, %v; want 2", got, err)
	}
}

func TestStartFailureReportsLog(t *testing.T) {
	needMariaDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Dir: t.TempDir(), ExtraArgs: []string{"--no-such-option-at-all=1"}})
	if err == nil {
		s.Stop()
		t.Fatal("Start with a bad option succeeded")
	}
	// The error carries the tail of mariadbd's error log, which names the
	// option.
	t.Logf("error: %v", err)
	if !strings.Contains(err.Error(), "no-such-option-at-all") || !strings.Contains(err.Error(), "mariadbd.err") {
		t.Errorf("error does not show the log tail:\n%v", err)
	}
}

func TestCancelStopsServer(t *testing.T) {
	needMariaDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Options{Dir: t.TempDir()})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer s.Stop()
	pgid := s.proc.Pid()
	cancel()
	select {
	case <-s.proc.Exited():
	case <-time.After(defaultStopTimeout + 5*time.Second):
		t.Fatal("server still running after ctx was cancelled")
	}
	if !groupGone(pgid) {
		t.Errorf("process group %d still has processes after cancel", pgid)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop after cancel: %v", err)
	}
}

func TestLongDirUsesShortSocket(t *testing.T) {
	needMariaDB(t)
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	s, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	sockDir := s.sockDir
	if len(s.Socket) > maxSunPath || !strings.HasPrefix(s.Socket, "/tmp/") {
		t.Errorf("Socket = %q, want a short path under /tmp", s.Socket)
	}
	if _, err := s.query(context.Background(), "", "SELECT 1"); err != nil {
		t.Errorf("query over the short socket: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sockDir); !os.IsNotExist(err) {
		t.Errorf("socket dir %s left behind after Stop", sockDir)
	}
}
