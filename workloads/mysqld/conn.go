package mysqld

import (
	"database/sql"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Conn is how a client reaches a server and logs in. The test suites, a
// workload's loader and PHP are all given one, so that a server's details
// travel as one value instead of being copied field by field.
type Conn struct {
	Host     string // 127.0.0.1 for a Server: it listens on loopback only
	Port     int
	Socket   string // the unix socket
	User     string
	Password string
	Database string // "" for none
}

// WithDatabase is c for database name.
func (c Conn) WithDatabase(name string) Conn {
	c.Database = name
	return c
}

// LocalConn is how a client in the server's own network namespace reaches
// it: 127.0.0.1 and the port the server listens on there, and its socket.
// For a host server that is its Conn; for a server in a container, what a
// container that shares the server's network namespace sees. PHP's tests
// need it: some are skipped unless the server is 127.0.0.1 or localhost,
// and see the client as connecting from there.
func (s *Server) LocalConn() Conn {
	c := s.Conn
	c.Host = "127.0.0.1"
	return c
}

// dialTimeout bounds a connection attempt of patchproof's own client; a
// query's own time is bounded by its context.
const dialTimeout = 10 * time.Second

// Config is the configuration of go-sql-driver/mysql that reaches c from
// this host: over the socket when c has one (a container's server too,
// through its bind-mounted directory), else over TCP to Host:Port (Host
// default 127.0.0.1). The driver's own log lines are discarded: the cause
// behind its "invalid connection" would otherwise land on stderr, in the
// middle of patchproof's progress.
func (c Conn) Config() *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = c.User, c.Password, c.Database
	if c.Socket != "" {
		cfg.Net, cfg.Addr = "unix", c.Socket
	} else {
		host := c.Host
		if host == "" {
			host = "127.0.0.1"
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(c.Port))
	}
	cfg.Timeout = dialTimeout
	cfg.Logger = &mysql.NopLogger{}
	return cfg
}

// DSN is Config as a data source name for sql.Open("mysql", ...). It holds
// the password: never print it (String is c without it).
func (c Conn) DSN() string { return c.Config().FormatDSN() }

// String says where c goes and as whom, without the password, for logs and
// error messages: user@unix(/path/mysqld.sock)/db or user@tcp(host:port)/db.
func (c Conn) String() string {
	cfg := c.Config()
	return cfg.User + "@" + cfg.Net + "(" + cfg.Addr + ")/" + cfg.DBName
}

// Open returns a pool of connections to c (none is made until one is
// used). The caller closes it.
func (c Conn) Open() (*sql.DB, error) {
	return OpenConfig(c.Config())
}

// OpenConfig is Open for a Config that a caller has adjusted (several
// statements a query for a loader, say).
func OpenConfig(cfg *mysql.Config) (*sql.DB, error) {
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		shown := cfg.Clone()
		shown.Passwd = ""
		return nil, fmt.Errorf("open %s: %w", shown.FormatDSN(), err)
	}
	return sql.OpenDB(connector), nil
}

// ErrUnsafeName is wrapped by what refuses a database, table or counter
// name that is not plain letters, digits and _: such names are pasted into
// SQL, where placeholders cannot stand for an identifier.
var ErrUnsafeName = errors.New("want 1 to 64 letters, digits and _")

var safeIdent = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// QuoteIdent is name quoted as an SQL identifier (`name`), or an error
// wrapping ErrUnsafeName when name is anything but letters, digits and _
// (64 at most, MariaDB's limit): a backtick, a quote, a space or a
// semicolon never reaches the server.
func QuoteIdent(name string) (string, error) {
	if !safeIdent.MatchString(name) {
		return "", fmt.Errorf("name %q: %w", name, ErrUnsafeName)
	}
	return "`" + name + "`", nil
}
