package mysqld

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestConnDSN(t *testing.T) {
	tests := []struct {
		name    string
		c       Conn
		dsn     string
		display string
	}{
		{
			name:    "socket",
			c:       Conn{Host: "127.0.0.1", Port: 3306, Socket: "/run/pp/mysqld.sock", User: "patchproof", Password: "p4ss", Database: "suite_a"},
			dsn:     "patchproof:p4ss@unix(/run/pp/mysqld.sock)/suite_a?timeout=10s",
			display: "patchproof@unix(/run/pp/mysqld.sock)/suite_a",
		},
		{
			name:    "tcp",
			c:       Conn{Host: "mariadb", Port: 3306, User: "patchproof", Password: "p4ss"},
			dsn:     "patchproof:p4ss@tcp(mariadb:3306)/?timeout=10s",
			display: "patchproof@tcp(mariadb:3306)/",
		},
		{
			name:    "tcp on loopback by default",
			c:       Conn{Port: 40123, User: "u", Password: "pw-9", Database: "w"},
			dsn:     "u:pw-9@tcp(127.0.0.1:40123)/w?timeout=10s",
			display: "u@tcp(127.0.0.1:40123)/w",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.DSN(); got != tt.dsn {
				t.Errorf("DSN() = %q, want %q", got, tt.dsn)
			}
			// sql.Open("mysql", DSN) reads back what Config says.
			parsed, err := mysql.ParseDSN(tt.c.DSN())
			if err != nil {
				t.Fatal(err)
			}
			want := tt.c.Config()
			if parsed.Net != want.Net || parsed.Addr != want.Addr || parsed.User != want.User || parsed.Passwd != want.Passwd || parsed.DBName != want.DBName || parsed.Timeout != want.Timeout {
				t.Errorf("ParseDSN(DSN()) = %s %s %s %s, want %s %s %s %s", parsed.Net, parsed.Addr, parsed.User, parsed.DBName, want.Net, want.Addr, want.User, want.DBName)
			}
			if got := tt.c.String(); got != tt.display || strings.Contains(got, tt.c.Password) {
				t.Errorf("String() = %q, want %q (no password)", got, tt.display)
			}
			// %v and %+v of a Conn, a Server's included, go through String.
			if got := (&Server{Conn: tt.c}); strings.Contains(fmt.Sprintf("%v %+v", tt.c, got), tt.c.Password) {
				t.Errorf("formatted, the Conn shows its password")
			}
		})
	}
}

func TestQuoteIdent(t *testing.T) {
	tests := []struct {
		name string
		want string // "" for refused
	}{
		{"suite_a", "`suite_a`"},
		{"pp_counted", "`pp_counted`"},
		{"X9", "`X9`"},
		{strings.Repeat("d", 64), "`" + strings.Repeat("d", 64) + "`"},
		{strings.Repeat("d", 65), ""},
		{"", ""},
		{"bad name", ""},
		{"x`; DROP DATABASE mysql; --", ""},
		{"x'", ""},
		{"a.b", ""},
		{"dé", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := QuoteIdent(tt.name)
			if tt.want == "" {
				if !errors.Is(err, ErrUnsafeName) || got != "" {
					t.Errorf("QuoteIdent(%q) = %q, %v; want ErrUnsafeName", tt.name, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("QuoteIdent(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
			}
		})
	}
}
