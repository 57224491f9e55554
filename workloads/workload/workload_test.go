package workload_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/workloads/jsonapi"
	"github.com/patchproof/patchproof/workloads/mysqld"
	"github.com/patchproof/patchproof/workloads/select20"
	"github.com/patchproof/patchproof/workloads/workload"
)

func TestDSN(t *testing.T) {
	tests := []struct {
		db   workload.DB
		want string
	}{
		{workload.DB{Conn: mysqld.Conn{Port: 3307, Database: "select20"}}, "mysql:host=127.0.0.1;port=3307;dbname=select20"},
		{workload.DB{Conn: mysqld.Conn{Host: "db", Port: 3306, Socket: "/s.sock", Database: "x"}}, "mysql:host=db;port=3306;dbname=x"},
		{workload.DB{Conn: mysqld.Conn{Port: 3306, Socket: "/s.sock", Database: "x"}, UseSocket: true}, "mysql:unix_socket=/s.sock;dbname=x"},
	}
	for _, tt := range tests {
		if got := tt.db.DSN(); got != tt.want {
			t.Errorf("%+v: DSN %q, want %q", tt.db, got, tt.want)
		}
	}
	env := workload.DB{Conn: mysqld.Conn{Port: 1, User: "u", Password: "p"}}.WithName("w").Env()
	if diff := cmp.Diff(map[string]string{"PP_DB_DSN": "mysql:host=127.0.0.1;port=1;dbname=w", "PP_DB_USER": "u", "PP_DB_PASSWORD": "p"}, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if err := workload.Load(context.Background(), workload.DB{}, select20.Workload(), t.TempDir()); err == nil {
		t.Error("Load without a server: no error")
	}
}

// TestLoad loads both workloads into a real MariaDB, twice, and checks
// that the data is what the PHP expects and the same each time.
func TestLoad(t *testing.T) {
	for _, tool := range []string{"mariadb", "mariadb-install-db"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := mysqld.Start(ctx, mysqld.Options{Dir: filepath.Join(t.TempDir(), "db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	db := workload.DB{Conn: s.Conn}
	dir := t.TempDir()
	query := func(name, sql string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, "mariadb", "-S", s.Socket, "-u"+s.User, "-p"+s.Password,
			"--batch", "--skip-column-names", name, "-e", sql).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", sql, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tests := []struct {
		w       workload.Workload
		queries map[string]string
	}{
		{select20.Workload(), map[string]string{
			"SELECT COUNT(*), MIN(id), MAX(id) FROM t":        "1000\t1\t1000",
			"SELECT COUNT(*) FROM t WHERE LENGTH(body) = 560": "1000",
		}},
		{jsonapi.Workload(), map[string]string{
			"SELECT COUNT(*) FROM users":                                                       "100",
			"SELECT COUNT(*) FROM api_tokens WHERE LENGTH(token) = 40":                         "100",
			"SELECT user_id FROM api_tokens WHERE token = '" + jsonapi.Token + "'":             "1",
			"SELECT COUNT(*) FROM posts":                                                       "1000",
			"SELECT MIN(n), MAX(n) FROM (SELECT COUNT(*) n FROM post_tags GROUP BY post_id) x": "1\t3",
			"SELECT COUNT(DISTINCT post_id) FROM post_tags":                                    "1000",
			"SELECT COUNT(*) FROM comments":                                                    "5000",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.w.Name, func(t *testing.T) {
			var sums []string
			for range 2 {
				if err := workload.Load(ctx, db, tt.w, dir); err != nil {
					t.Fatal(err)
				}
				for q, want := range tt.queries {
					if got := query(tt.w.Name, q); got != want {
						t.Errorf("%s = %q, want %q", q, got, want)
					}
				}
				tables := query(tt.w.Name, "SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM information_schema.tables WHERE table_schema = DATABASE()")
				sums = append(sums, query(tt.w.Name, "CHECKSUM TABLE "+tables))
			}
			if sums[0] != sums[1] {
				t.Errorf("data differs between two loads:\n%s\n%s", sums[0], sums[1])
			}
		})
	}
	n1, err := db.StatusCounter(ctx, "Connections", dir)
	if err != nil {
		t.Fatal(err)
	}
	n2, err := db.StatusCounter(ctx, "Connections", dir)
	if err != nil {
		t.Fatal(err)
	}
	if n2 != n1+1 {
		t.Errorf("Connections went from %d to %d over one query, want +1", n1, n2)
	}
}
