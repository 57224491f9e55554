// Package mysqld owns the MySQL-compatible server that PHP's MySQL test suites
// and the benchmark's workloads run against: a private MariaDB instance with
// its own datadir, started and stopped by patchproof, and Conn, how its
// clients reach it.
//
// Start initialises a datadir under Options.Dir (mariadb-install-db, once),
// starts mariadbd on a free loopback port and a unix socket, creates a user
// with a password and waits until the user can log in. The server runs in its
// own process group; Stop, or cancelling the context given to Start, shuts it
// down (SIGTERM, then SIGKILL after Options.StopTimeout).
//
// patchproof's own client is database/sql with go-sql-driver/mysql:
// Conn.Config, Conn.DSN and Conn.Open reach a server from this host, over
// its socket when the Conn has one. Names pasted into SQL (a database, a
// counter) go through QuoteIdent or a check like it; Conn.String, what logs
// and errors show, leaves the password out.
//
// The server is configured to behave like MySQL as PHP's tests expect it
// (what PHP 8.2.32's suites needed against Debian's MariaDB):
//   - version=<short version>: MariaDB's own VERSION() is 26 characters and
//     overflows a VARCHAR(25) in three mysqli tests;
//   - utf8mb4 as server character set, local_infile on, name resolution off,
//     enough connections for several suite runs side by side, a small InnoDB
//     buffer pool and relaxed durability (the data is thrown away).
//
// The test user holds ALL PRIVILEGES ON *.* WITH GRANT OPTION, because the
// tests themselves create users, grant, create databases and SET GLOBAL
// (max_allowed_packet). Two suite runs side by side on one server, each in
// its own database (CreateDatabase), therefore share those global objects;
// measured with PHP 8.2.32 they still gave identical results. A separate
// server per run (one Start per run dir, ~0.4 s once installed, ~240 MB
// resident) removes that coupling entirely.
//
// Options.Engine says where the server runs. EngineHost runs this host's
// mariadbd. EngineDocker runs Debian's mariadbd in a container of a local
// image (EnsureImage: mariadb-server installed into the Debian base image
// the build image starts from, so no registry is needed), with the same
// settings and accounts, on a Docker network given by the caller, where its
// alias (Conn.Host) names it. Clients log in as they do to a host server:
// from a container that shares its network namespace, at 127.0.0.1:3306
// (LocalConn), or on its socket, whose directory (apart from the datadir)
// they may bind. Its
// datadir, logs and socket are still in Options.Dir, bind-mounted; the
// container is removed by Stop, when Start's context ends, and when Start
// fails, whose error then carries the container's output and the error
// log's tail.
package mysqld
