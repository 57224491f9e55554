package mysqld

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
