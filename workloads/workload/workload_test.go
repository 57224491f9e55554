package workload_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/workloads/mysqld"
	"github.com/patchproof/patchproof/workloads/select20"
	"github.com/patchproof/patchproof/workloads/workload"
)

func TestPDODSN(t *testing.T) {
	tests := []struct {
		db   workload.DB
		want string
	}{
		{workload.DB{Conn: mysqld.Conn{Port: 3307, Database: "select20"}}, "mysql:host=127.0.0.1;port=3307;dbname=select20"},
		{workload.DB{Conn: mysqld.Conn{Host: "db", Port: 3306, Socket: "/s.sock", Database: "x"}}, "mysql:host=db;port=3306;dbname=x"},
		{workload.DB{Conn: mysqld.Conn{Port: 3306, Socket: "/s.sock", Database: "x"}, UseSocket: true}, "mysql:unix_socket=/s.sock;dbname=x"},
	}
	for _, tt := range tests {
		if got := tt.db.PDODSN(); got != tt.want {
			t.Errorf("%+v: PDODSN %q, want %q", tt.db, got, tt.want)
		}
	}
	env := workload.DB{Conn: mysqld.Conn{Port: 1, User: "u", Password: "p"}}.WithName("w").Env()
	if diff := cmp.Diff(map[string]string{"PP_DB_DSN": "mysql:host=127.0.0.1;port=1;dbname=w", "PP_DB_USER": "u", "PP_DB_PASSWORD": "p"}, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

// Names that would inject SQL are refused before anything is sent: the
// server named does not exist.
func TestRefused(t *testing.T) {
	nowhere := workload.DB{Conn: mysqld.Conn{Socket: filepath.Join(t.TempDir(), "none.sock")}}
	if err := workload.Load(t.Context(), workload.DB{}, select20.Workload()); !errors.Is(err, workload.ErrNoDatabase) {
		t.Errorf("Load without a server = %v, want ErrNoDatabase", err)
	}
	for _, name := range []string{"x`; DROP DATABASE mysql; -- ", "a b", "x'"} {
		db := nowhere
		db.Database = name
		if err := workload.Load(t.Context(), db, select20.Workload()); !errors.Is(err, mysqld.ErrUnsafeName) {
			t.Errorf("Load into %q = %v, want ErrUnsafeName", name, err)
		}
		if _, err := nowhere.StatusCounter(t.Context(), name); !errors.Is(err, mysqld.ErrUnsafeName) {
			t.Errorf("StatusCounter(%q) = %v, want ErrUnsafeName", name, err)
		}
	}
	if _, err := nowhere.StatusCounter(t.Context(), "Connections' OR '1'='1"); !errors.Is(err, mysqld.ErrUnsafeName) {
		t.Errorf("StatusCounter with a quote = %v, want ErrUnsafeName", err)
	}
}

// startServer is a MariaDB of the test's own, or a skip where MariaDB is
// not installed.
func startServer(t *testing.T) *mysqld.Server {
	t.Helper()
	for _, tool := range []string{"mariadbd", "mariadb-install-db"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat("/usr/sbin/" + tool); err != nil {
				t.Skipf("%s not installed", tool)
			}
		}
	}
	s, err := mysqld.Start(t.Context(), mysqld.Options{Dir: filepath.Join(t.TempDir(), "db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

// query is what c answers q with: its rows, one a line, columns
// tab-separated, NULL as "NULL".
func query(t *testing.T, c mysqld.Conn, q string) string {
	t.Helper()
	db, err := c.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fields := make([]string, len(cols))
		for i, v := range vals {
			fields[i] = "NULL"
			if v.Valid {
				fields[i] = v.String
			}
		}
		lines = append(lines, strings.Join(fields, "\t"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(lines, "\n")
}

// TestLoad loads the workloads into a real MariaDB, twice, and checks
// that the data is what the PHP expects and the same each time.
func TestLoad(t *testing.T) {
	s := startServer(t)
	ctx := t.Context()
	db := workload.DB{Conn: s.Conn}
	tests := []struct {
		w       workload.Workload
		queries map[string]string
	}{
		{select20.Workload(), map[string]string{
			"SELECT COUNT(*), MIN(id), MAX(id) FROM t":        "1000\t1\t1000",
			"SELECT COUNT(*) FROM t WHERE LENGTH(body) = 560": "1000",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.w.Name, func(t *testing.T) {
			var sums []string
			for range 2 {
				if err := workload.Load(ctx, db, tt.w); err != nil {
					t.Fatal(err)
				}
				c := s.Conn.WithDatabase(tt.w.Name)
				for q, want := range tt.queries {
					if got := query(t, c, q); got != want {
						t.Errorf("%s = %q, want %q", q, got, want)
					}
				}
				tables := query(t, c, "SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM information_schema.tables WHERE table_schema = DATABASE()")
				sums = append(sums, query(t, c, "CHECKSUM TABLE "+tables))
			}
			if sums[0] != sums[1] {
				t.Errorf("data differs between two loads:\n%s\n%s", sums[0], sums[1])
			}
		})
	}
}

// A schema of several statements runs whole and in order: a semicolon in a
// string or a comment ends none, and the first statement that fails stops
// the load with the server's error.
func TestLoadStatements(t *testing.T) {
	s := startServer(t)
	db := workload.DB{Conn: s.Conn}
	w := workload.Workload{Name: "pp_statements", Schema: []byte(`-- a comment; not a statement
DROP TABLE IF EXISTS notes;
CREATE TABLE notes (id INT PRIMARY KEY, body VARCHAR(64) NOT NULL) ENGINE=InnoDB;
/* another; comment */
INSERT INTO notes VALUES (1, 'one; two'), (2, 'it''s -- here');
INSERT INTO notes SELECT id + 10, CONCAT(body, ';') FROM notes;
-- a trailing comment
`)}
	for range 2 {
		if err := workload.Load(t.Context(), db, w); err != nil {
			t.Fatal(err)
		}
	}
	got := query(t, s.Conn.WithDatabase(w.Name), "SELECT id, body FROM notes ORDER BY id")
	if want := "1\tone; two\n2\tit's -- here\n11\tone; two;\n12\tit's -- here;"; got != want {
		t.Errorf("notes:\n%s\nwant:\n%s", got, want)
	}

	bad := workload.Workload{Name: "pp_bad", Schema: []byte(`CREATE TABLE IF NOT EXISTS first (id INT);
INSERT INTO no_such_table VALUES (1);
CREATE TABLE never (id INT);`)}
	err := workload.Load(t.Context(), db, bad)
	var answered *mysql.MySQLError
	if !errors.As(err, &answered) || !strings.Contains(err.Error(), "no_such_table") || !strings.HasPrefix(err.Error(), "load pp_bad into pp_bad: ") {
		t.Fatalf("Load of a bad schema = %v, want the server's error about no_such_table", err)
	}
	if strings.Contains(err.Error(), s.Password) {
		t.Errorf("the error shows the password: %v", err)
	}
	tables := query(t, s.Conn.WithDatabase(bad.Name), "SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM information_schema.tables WHERE table_schema = DATABASE()")
	if tables != "first" {
		t.Errorf("tables after the failed load: %q, want only the one before the error", tables)
	}
}

// StatusCounter reads the server's counters: its own connection moves
// Connections by one, and queries move Com_select.
func TestStatusCounter(t *testing.T) {
	s := startServer(t)
	ctx := t.Context()
	db := workload.DB{Conn: s.Conn.WithDatabase("not_created_yet")}
	n1, err := db.StatusCounter(ctx, "Connections")
	if err != nil {
		t.Fatal(err)
	}
	n2, err := db.StatusCounter(ctx, "Connections")
	if err != nil {
		t.Fatal(err)
	}
	if n2 != n1+1 {
		t.Errorf("Connections went from %d to %d over one query, want +1", n1, n2)
	}

	const selects = 5
	before, err := db.StatusCounter(ctx, "Com_select")
	if err != nil {
		t.Fatal(err)
	}
	for i := range selects {
		if got := query(t, s.Conn, fmt.Sprintf("SELECT %d", i)); got != strconv.Itoa(i) {
			t.Fatalf("SELECT %d = %q", i, got)
		}
	}
	after, err := db.StatusCounter(ctx, "Com_select")
	if err != nil {
		t.Fatal(err)
	}
	if after-before < selects {
		t.Errorf("Com_select went from %d to %d over %d SELECTs", before, after, selects)
	}
	// The _ in a name is no LIKE wildcard: Com_select is one counter.
	if _, err := db.StatusCounter(ctx, "Com_selec_"); err == nil || !strings.Contains(err.Error(), "no such counter") {
		t.Errorf("StatusCounter(Com_selec_) = %v, want no such counter", err)
	}
}
