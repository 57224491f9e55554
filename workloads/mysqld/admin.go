package mysqld

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log"
	"os/exec"
	"regexp"
	"strings"

	"github.com/patchproof/patchproof/internal/childenv"
)

// CreateDatabase creates database name (if missing) with utf8mb4 and grants
// the user everything on it. One database per suite run keeps runs that go
// side by side apart.
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	db, err := QuoteIdent(name)
	if err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	stmts := []string{"CREATE DATABASE IF NOT EXISTS " + db + " CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"}
	for _, host := range s.accounts {
		stmts = append(stmts, "GRANT ALL PRIVILEGES ON "+db+".* TO "+account(s.User, host))
	}
	if err := s.exec(ctx, stmts...); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// account is user@host as SQL names an account. Start refuses a user that
// is not letters, digits and _, and the hosts are patchproof's own, so
// neither can close the quotes.
func account(user, host string) string {
	return "'" + user + "'@'" + host + "'"
}

// exec runs statements in order on one connection over the socket, as the
// test user: from this host, for a server in a container too (the socket's
// directory is bind-mounted).
func (s *Server) exec(ctx context.Context, stmts ...string) error {
	db, err := s.open(s.Conn.WithDatabase(""))
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, q := range stmts {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// open is c.Open with the driver's log lines in the server's log (they
// hold the cause behind an "invalid connection"), and no connection kept
// idle: PHP's tests look at the server's connections, and none of
// patchproof's own should linger among them.
func (s *Server) open(c Conn) (*sql.DB, error) {
	cfg := c.Config()
	cfg.Logger = log.New(s.opt.Log, "mariadb: driver: ", 0)
	db, err := OpenConfig(cfg)
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(0)
	return db, nil
}

// versionRE takes "10.11.19-MariaDB" out of mariadbd --version's
// "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64".
var versionRE = regexp.MustCompile(`Ver\s+(\d+\.\d+\.\d+)(-MariaDB)?`)

// maxVersionLen: three mysqli tests store VERSION() in a VARCHAR(25).
const maxVersionLen = 24

// shortVersion is the server's version without the distribution suffix,
// short enough for the tests' VARCHAR(25).
func shortVersion(ctx context.Context, mariadbd string) (string, error) {
	cmd := exec.CommandContext(ctx, mariadbd, "--version")
	cmd.Env = childenv.For(childenv.Database)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w: %s", mariadbd, err, bytes.TrimSpace(out))
	}
	return parseVersion(string(out))
}

func parseVersion(out string) (string, error) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("parse server version from %q", strings.TrimSpace(out))
	}
	v := m[1] + m[2]
	if len(v) > maxVersionLen {
		return "", fmt.Errorf("server version %q: longer than %d characters", v, maxVersionLen)
	}
	return v, nil
}
