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
