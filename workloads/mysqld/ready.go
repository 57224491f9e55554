package mysqld

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// startup is what a readiness wait watches and says when the server does
// not come up.
type startup struct {
	op       string // "start mariadbd", for errors
	deadline time.Time
	exited   <-chan struct{} // closed when the server has exited
	status   func() string   // how it exited
	logs     func() string   // its logs' tails, for an error
}

// Readiness: a ping every readyPoll, each given pingTimeout; a server that
// answers a login with an error is asked loginAttempts times in all (the
// init file has run by the time it accepts connections, so that error is
// real).
const (
	readyPoll     = 100 * time.Millisecond
	pingTimeout   = time.Second
	loginAttempts = 5
)

// awaitLogin pings the server at c until the user logs in, and returns
// what VERSION() answers then.
func (s *Server) awaitLogin(ctx context.Context, st startup, c Conn) (string, error) {
	db, err := s.open(c)
	if err != nil {
		return "", fmt.Errorf("%s: %w", st.op, err)
	}
	defer db.Close()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	refused := 0
	for {
		select {
		case <-st.exited:
			return "", fmt.Errorf("%s: exited during start-up (%s); %s", st.op, st.status(), st.logs())
		case <-ctx.Done():
			return "", fmt.Errorf("%s: %w", st.op, ctx.Err())
		case <-tick.C:
		}
		version, err := pingVersion(ctx, db)
		if err == nil {
			return version, nil
		}
		var answered *mysql.MySQLError
		if errors.As(err, &answered) {
			if refused++; refused == loginAttempts {
				return "", fmt.Errorf("%s: log in as %s: %w; %s", st.op, c, err, st.logs())
			}
		}
		if time.Now().After(st.deadline) {
			return "", fmt.Errorf("%s: no login as %s within %v: %w; %s", st.op, c, s.opt.StartTimeout, err, st.logs())
		}
	}
}

// pingVersion logs in, pings and asks VERSION() on one connection, within
// pingTimeout.
func pingVersion(ctx context.Context, db *sql.DB) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	c, err := db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.PingContext(ctx); err != nil {
		return "", err
	}
	var v string
	err = c.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v)
	return v, err
}
