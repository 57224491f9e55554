// Package workload owns what a benchmark workload is — a PHP application,
// the request that exercises it, the check that a response is right and
// the SQL that creates its data — and loading that data into a database.
//
// The workloads themselves live in their own packages (select20, jsonapi),
// each embedding its SQL and PHP files. The PHP reads its database from the
// environment: PP_DB_DSN (a PDO DSN), PP_DB_USER and PP_DB_PASSWORD, which
// a server sets from [DB.Env].
package workload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/workloads/mysqld"
)

// A Workload is a PHP application and its data.
type Workload struct {
	// Name is a short identifier, also the benchmark's name in bench.txt
	// ("select20" gives BenchmarkSelect20).
	Name string
	// Schema creates the workload's tables and fills them with
	// deterministic data. It drops what it creates first, so loading twice
	// gives the same database.
	Schema []byte
	// Files is the document root: path → content, "index.php" at least.
	Files map[string][]byte
	// Path is the request path every request of the benchmark uses.
	Path string
	// Header is sent with every request.
	Header http.Header
	// Check says whether a response is the one the application gives when
	// everything works: the readiness probe and the benchmark use it.
	Check func(status int, body []byte) error
}

// HeaderLines returns Header as "Name: value" lines, sorted, for wrk's -H.
func (w Workload) HeaderLines() []string {
	var lines []string
	for k, vs := range w.Header {
		for _, v := range vs {
			lines = append(lines, k+": "+v)
		}
	}
	slices.Sort(lines)
	return lines
}

// DB is where a workload's data lives and how PHP reaches it: the server's
// Conn (Host default 127.0.0.1; the Socket is the loader's and, with
// UseSocket, PHP's; Database default the workload's name), and how to use
// it.
type DB struct {
	mysqld.Conn
	// UseSocket makes PHP connect over Socket instead of TCP. TCP is the
	// report's setup; a persistent connection per thread keeps TIME_WAIT
	// sockets from piling up either way.
	UseSocket bool
	// Client is the mariadb (or mysql) command-line client the loader runs;
	// default "mariadb".
	Client string
}

// ErrNoDatabase is wrapped by Load when DB names no server to reach.
var ErrNoDatabase = errors.New("no database server given")

var safeName = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// WithName returns db with its Database set to name when it has none.
func (db DB) WithName(name string) DB {
	if db.Database == "" {
		db.Database = name
	}
	return db
}

// DSN is the PDO DSN PHP connects with.
func (db DB) DSN() string {
	if db.UseSocket && db.Socket != "" {
		return fmt.Sprintf("mysql:unix_socket=%s;dbname=%s", db.Socket, db.Database)
	}
	return fmt.Sprintf("mysql:host=%s;port=%d;dbname=%s", db.host(), db.Port, db.Database)
}

// Env is what the workload's PHP reads its database from.
func (db DB) Env() map[string]string {
	return map[string]string{
		"PP_DB_DSN":      db.DSN(),
		"PP_DB_USER":     db.User,
		"PP_DB_PASSWORD": db.Password,
	}
}

func (db DB) host() string {
	if db.Host == "" {
		return "127.0.0.1"
	}
	return db.Host
}

// Load creates database db.Database (default w.Name) if missing and runs the
// workload's schema in it with the command-line client, over the socket when
// there is one. dir receives the client's option file (mode 0600: it holds
// the password) and is left as it was otherwise.
func Load(ctx context.Context, db DB, w Workload, dir string) error {
	db = db.WithName(w.Name)
	if db.Socket == "" && db.Port == 0 {
		return fmt.Errorf("load %s: %w", w.Name, ErrNoDatabase)
	}
	if !safeName.MatchString(db.Database) {
		return fmt.Errorf("load %s: database name %q: want letters, digits and _", w.Name, db.Database)
	}
	client := db.Client
	if client == "" {
		client = "mariadb"
	}
	cnf, err := writeClientConfig(db, dir)
	if err != nil {
		return fmt.Errorf("load %s: %w", w.Name, err)
	}
	defer os.Remove(cnf)
	sql := fmt.Sprintf("CREATE DATABASE IF NOT EXISTS `%s` CHARACTER SET utf8mb4;\nUSE `%s`;\n%s", db.Database, db.Database, w.Schema)
	cmd := exec.CommandContext(ctx, client, "--defaults-file="+cnf, "--batch")
	cmd.Env = childenv.Environ()
	cmd.Stdin = strings.NewReader(sql)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("load %s into %s: %s: %w: %s", w.Name, db.Database, client, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// StatusCounter reads a global status counter of the server, such as
// Connections (every connection attempt, this one's included), with the
// command-line client. dir receives the client's option file for the
// moment of the query.
func (db DB) StatusCounter(ctx context.Context, name, dir string) (int64, error) {
	if !safeName.MatchString(name) {
		return 0, fmt.Errorf("status %q: want letters, digits and _", name)
	}
	client := db.Client
	if client == "" {
		client = "mariadb"
	}
	cnf, err := writeClientConfig(db, dir)
	if err != nil {
		return 0, fmt.Errorf("status %s: %w", name, err)
	}
	defer os.Remove(cnf)
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, client, "--defaults-file="+cnf, "--batch", "--skip-column-names",
		"-e", fmt.Sprintf("SHOW GLOBAL STATUS LIKE '%s'", name))
	cmd.Env = childenv.Environ()
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("status %s: %s: %w: %s", name, client, err, strings.TrimSpace(stderr.String()))
	}
	f := strings.Fields(out.String())
	if len(f) != 2 {
		return 0, fmt.Errorf("status %s: unexpected answer %q", name, out.String())
	}
	v, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("status %s: %w", name, err)
	}
	return v, nil
}

// writeClientConfig writes an option file for the client, so that the
// password stays off the command line.
func writeClientConfig(db DB, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "client-*.cnf")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("[client]\n")
	fmt.Fprintf(&b, "user=%s\npassword=%s\n", db.User, db.Password)
	if db.Socket != "" {
		fmt.Fprintf(&b, "socket=%s\nprotocol=socket\n", db.Socket)
	} else {
		fmt.Fprintf(&b, "host=%s\nport=%s\nprotocol=tcp\n", db.host(), strconv.Itoa(db.Port))
	}
	_, werr := f.WriteString(b.String())
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return filepath.Clean(f.Name()), nil
}
