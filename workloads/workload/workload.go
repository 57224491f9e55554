// Package workload owns what a benchmark workload is — a PHP application,
// the request that exercises it, the check that a response is right and
// the SQL that creates its data — and loading that data into a database.
//
// The workloads themselves live in their own packages (select20), each
// embedding its SQL and PHP files. The PHP reads its database from the
// environment: PP_DB_DSN (a PDO DSN), PP_DB_USER and PP_DB_PASSWORD, which
// a server sets from [DB.Env].
package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

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
}

// ErrNoDatabase is wrapped by Load when DB names no server to reach.
var ErrNoDatabase = errors.New("no database server given")

// counterName is what a status counter's name may be: it is pasted into a
// string literal.
var counterName = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// WithName returns db with its Database set to name when it has none.
func (db DB) WithName(name string) DB {
	if db.Database == "" {
		db.Database = name
	}
	return db
}

// PDODSN is the PDO DSN PHP connects with (Conn.DSN is patchproof's own
// client's).
func (db DB) PDODSN() string {
	if db.UseSocket && db.Socket != "" {
		return fmt.Sprintf("mysql:unix_socket=%s;dbname=%s", db.Socket, db.Database)
	}
	return fmt.Sprintf("mysql:host=%s;port=%d;dbname=%s", db.host(), db.Port, db.Database)
}

// Env is what the workload's PHP reads its database from.
func (db DB) Env() map[string]string {
	return map[string]string{
		"PP_DB_DSN":      db.PDODSN(),
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
// workload's schema in it, over the socket when there is one.
//
// The schema goes to the server whole, as one query of several statements,
// on a connection of its own that allows them (multiStatements): splitting
// it here would take an SQL lexer (a semicolon in a string or a comment is
// no statement's end), and the server is one; it runs the statements in
// order and stops at the first that fails, whose error comes back. No
// other connection allows several statements, so nothing else that pastes
// a name into SQL could be made to stack a second one, and the schema is
// the workload's own file.
func Load(ctx context.Context, db DB, w Workload) error {
	db = db.WithName(w.Name)
	if db.Socket == "" && db.Port == 0 {
		return fmt.Errorf("load %s: %w", w.Name, ErrNoDatabase)
	}
	name, err := mysqld.QuoteIdent(db.Database)
	if err != nil {
		return fmt.Errorf("load %s: database: %w", w.Name, err)
	}
	cfg := db.Conn.WithDatabase("").Config()
	cfg.MultiStatements = true
	pool, err := mysqld.OpenConfig(cfg)
	if err != nil {
		return fmt.Errorf("load %s: %w", w.Name, err)
	}
	defer pool.Close()
	c, err := pool.Conn(ctx)
	if err != nil {
		return fmt.Errorf("load %s into %s: %w", w.Name, db.Database, err)
	}
	defer c.Close()
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS " + name + " CHARACTER SET utf8mb4",
		"USE " + name,
		strings.TrimSpace(string(w.Schema)),
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("load %s into %s: %w", w.Name, db.Database, err)
		}
	}
	return nil
}

// StatusCounter reads a global status counter of the server, such as
// Connections, on a connection of its own, made for the query and closed
// after it: Connections counts it, so it grows by one a call.
func (db DB) StatusCounter(ctx context.Context, name string) (int64, error) {
	if !counterName.MatchString(name) {
		return 0, fmt.Errorf("status %q: %w", name, mysqld.ErrUnsafeName)
	}
	pool, err := db.Conn.WithDatabase("").Open()
	if err != nil {
		return 0, fmt.Errorf("status %s: %w", name, err)
	}
	defer pool.Close()
	// In LIKE, _ is any character: escaped, the pattern matches name only.
	q := "SHOW GLOBAL STATUS LIKE '" + strings.ReplaceAll(name, "_", `\_`) + "'"
	var got string
	var v int64
	switch err := pool.QueryRowContext(ctx, q).Scan(&got, &v); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("status %s: no such counter", name)
	case err != nil:
		return 0, fmt.Errorf("status %s: %w", name, err)
	}
	return v, nil
}
