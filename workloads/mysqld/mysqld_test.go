package mysqld

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
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

// ask is the first column of the first row that c answers q with ("" for a
// statement without rows), on a connection of its own.
func ask(ctx context.Context, c Conn, q string) (string, error) {
	db, err := c.Open()
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v sql.NullString
	if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	return v.String, nil
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
	for _, bad := range []string{"bad name; DROP", "x` CHARACTER SET latin1; DROP DATABASE mysql; -- ", ""} {
		if err := s.CreateDatabase(t.Context(), bad); !errors.Is(err, ErrUnsafeName) {
			t.Errorf("CreateDatabase(%q) = %v, want ErrUnsafeName", bad, err)
		}
	}

	// The user logs in over TCP and the socket and uses the database.
	tcp := s.Conn.WithDatabase("suite_a")
	tcp.Socket = ""
	for _, c := range []Conn{tcp, s.Conn.WithDatabase("suite_a")} {
		for _, q := range []string{"CREATE TABLE IF NOT EXISTS t (id INT)", "INSERT INTO t VALUES (1)"} {
			if _, err := ask(t.Context(), c, q); err != nil {
				t.Fatalf("%s: %s: %v", c, q, err)
			}
		}
		got, err := ask(t.Context(), c, "SELECT CONCAT_WS(' ', VERSION(), @@character_set_server, IF(@@local_infile, 'local_infile', 'no local_infile'))")
		if want := s.Version + " utf8mb4 local_infile"; err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", c, got, err, want)
		}
	}
	// A wrong password is refused: grants are in force. The error says
	// so, and shows no password.
	wrong := s.Conn
	wrong.Password = "wrong" + s.Password
	_, err = ask(t.Context(), wrong, "SELECT 1")
	var refused *mysql.MySQLError
	if !errors.As(err, &refused) || refused.Number != 1045 {
		t.Errorf("login with a wrong password: %v, want error 1045", err)
	}
	if err != nil && strings.Contains(err.Error(), s.Password) {
		t.Errorf("the error shows the password: %v", err)
	}

	pgid := s.PID
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
	if got, err := ask(t.Context(), s2.Conn.WithDatabase("suite_a"), "SELECT COUNT(*) FROM t"); err != nil || got != "2" {
		t.Errorf("rows in suite_a.t after restart: %q, %v; want 2", got, err)
	}
}

func TestStartFailureReportsLog(t *testing.T) {
	needMariaDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const password = "pp-secret-4711"
	var log bytes.Buffer
	s, err := Start(ctx, Options{Dir: t.TempDir(), Password: password, Log: &log, ExtraArgs: []string{"--no-such-option-at-all=1"}})
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
	if strings.Contains(err.Error(), password) || strings.Contains(log.String(), password) {
		t.Errorf("the error or the log shows the password:\n%v\n%s", err, log.String())
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
	pgid := s.PID
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
	if _, err := ask(t.Context(), s.Conn, "SELECT 1"); err != nil {
		t.Errorf("query over the short socket: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sockDir); !os.IsNotExist(err) {
		t.Errorf("socket dir %s left behind after Stop", sockDir)
	}
}

// A server that died by itself says so when it is stopped, with its
// error log, and every later Stop says the same.
func TestStopAfterDeath(t *testing.T) {
	needMariaDB(t)
	s, err := Start(t.Context(), Options{Dir: t.TempDir(), Log: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	if err := syscall.Kill(s.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.proc.Exited()
	err = s.Stop()
	if err == nil || !strings.Contains(err.Error(), "stop mariadbd: it had exited by itself") || !strings.Contains(err.Error(), s.ErrorLog) {
		t.Fatalf("Stop after a kill: %v, want it to say mariadbd had died, naming its log", err)
	}
	if again := s.Stop(); again != err {
		t.Errorf("second Stop: %v, want the first's %v", again, err)
	}
}

// The bootstrap server of mariadb-install-db removes every #sql* file in
// its tmpdir. Servers installed at once (the tests stage starts one per
// build) must not share one: in TMPDIR each would delete the others'
// temporary tables, and one install in a dozen failed. The install's
// tmpdir is the server's own: a #sql file in TMPDIR outlives it, one in
// the server's tmp does not.
func TestInstallKeepsToItsTmpdir(t *testing.T) {
	needMariaDB(t)
	shared := t.TempDir()
	t.Setenv("TMPDIR", shared)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(shared, "#sql-temptable-another-server")
	ours := filepath.Join(dir, "tmp", "#sql-temptable-left-over")
	for _, f := range []string{theirs, ours} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	installDB, err := lookTool("", "mariadb-install-db")
	if err != nil {
		t.Fatal(err)
	}
	osUser, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := installOnce(context.Background(), installDB, dir, osUser.Username, &log); err != nil {
		t.Fatalf("installOnce: %v\n%s", err, log.String())
	}
	if _, err := os.Stat(theirs); err != nil {
		t.Errorf("the install touched the shared tmpdir: %v", err)
	}
	if _, err := os.Stat(ours); !os.IsNotExist(err) {
		t.Errorf("the install did not run in the server's tmpdir: %s is still there (%v)", ours, err)
	}
}

// A failed install's error carries the log's error lines, not the advice
// mariadb-install-db prints whatever failed.
func TestInstallErrorsPicksErrorLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "install.log")
	log := "Installing MariaDB/MySQL system tables in '/x' ...\n" +
		"2026-12-03 18:34:07 1 [Warning] Could not remove temporary table: '/tmp/#sql-temptable-14fe-1-3', error: 2\n" +
		"ERROR: 1051  Unknown table 'mysql.tmp_user_sys'\n" +
		"Installation of system tables failed!  Examine the logs in\n" +
		strings.Repeat("advice\n", 30)
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got := installErrors(p)
	if !strings.Contains(got, "Unknown table 'mysql.tmp_user_sys'") || !strings.Contains(got, "Could not remove temporary table") {
		t.Errorf("installErrors = %q, want the ERROR and error lines", got)
	}
	if strings.Contains(got, "advice") {
		t.Errorf("installErrors = %q, has the advice", got)
	}
	if err := os.WriteFile(p, []byte("line 1\nline 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := installErrors(p); got != "line 1\nline 2" {
		t.Errorf("installErrors without error lines = %q, want the tail", got)
	}
}

// The server accepts TLS with the certificate it was given: a client that
// trusts only the server's authority connects over TCP to 127.0.0.1,
// verifies the certificate, and the session is encrypted. A client that
// trusts another authority is refused by its own verification, so the
// check cannot pass on an unverified connection.
func TestServerSpeaksTLS(t *testing.T) {
	needMariaDB(t)
	var log bytes.Buffer
	s, err := Start(t.Context(), Options{Dir: t.TempDir(), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	if fi, err := os.Stat(s.TLS.Key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("server key %s: %v, mode %v; want 0600", s.TLS.Key, err, fi.Mode().Perm())
	}
	connect := func(caFile string) (string, error) {
		pool := x509.NewCertPool()
		pemCA, err := os.ReadFile(caFile)
		if err != nil || !pool.AppendCertsFromPEM(pemCA) {
			t.Fatalf("read CA %s: %v", caFile, err)
		}
		c := s.Conn
		c.Socket = ""
		cfg := c.Config()
		cfg.TLS = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
		db, err := OpenConfig(cfg)
		if err != nil {
			return "", err
		}
		defer db.Close()
		var name, cipher string
		err = db.QueryRowContext(t.Context(), "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher)
		return cipher, err
	}
	if cipher, err := connect(s.TLS.CA); err != nil || cipher == "" {
		t.Errorf("TLS with the server's CA: cipher %q, %v; want a cipher", cipher, err)
	}
	other, err := makeTLS(t.TempDir(), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connect(other.CA); err == nil {
		t.Error("TLS trusting another CA connected: the certificate is not verified")
	}
}
