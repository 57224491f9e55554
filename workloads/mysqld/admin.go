package mysqld

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"

	"github.com/patchproof/patchproof/internal/childenv"
)

// CreateDatabase creates database name (if missing) with utf8mb4 and grants
// the user everything on it. One database per suite run keeps runs that go
// side by side apart.
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	if !safeName.MatchString(name) {
		return fmt.Errorf("create database %q: want letters, digits and _", name)
	}
	sql := fmt.Sprintf("CREATE DATABASE IF NOT EXISTS `%s` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;", name)
	for _, host := range s.accounts {
		sql += fmt.Sprintf(" GRANT ALL PRIVILEGES ON `%s`.* TO '%s'@'%s';", name, s.User, host)
	}
	if _, err := s.query(ctx, "", sql); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// query runs SQL with the mariadb client over the socket and returns its
// batch output (tab-separated, no column names). The client runs where the
// server does: on this host, or in the server's container.
func (s *Server) query(ctx context.Context, db, sql string) (string, error) {
	if s.ctr != nil {
		return s.ctr.query(ctx, s.clientConf, db, sql)
	}
	args := []string{"--defaults-file=" + s.clientConf, "--batch", "--skip-column-names", "-e", sql}
	if db != "" {
		args = append(args, db)
	}
	client, err := lookTool(s.opt.Client, "mariadb")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, client, args...)
	cmd.Env = childenv.Environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w: %s", client, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
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
	cmd.Env = childenv.Environ()
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
