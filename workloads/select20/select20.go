// Package select20 is the report's workload: one prepared SELECT of 20 rows
// at a random offset from a 1000-row table, answered as JSON, over one
// persistent PDO connection per PHP thread.
package select20

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/patchproof/patchproof/workloads/workload"
)

//go:embed schema.sql
var schema []byte

//go:embed index.php
var index []byte

// Rows is how many rows every response holds.
const Rows = 20

// Workload returns the workload.
func Workload() workload.Workload {
	return workload.Workload{
		Name:   "select20",
		Schema: schema,
		Files:  map[string][]byte{"index.php": index},
		Path:   "/index.php",
		Check:  Check,
	}
}

type row struct {
	ID        json.Number `json:"id"`
	Title     string      `json:"title"`
	Body      string      `json:"body"`
	CreatedAt string      `json:"created_at"`
}

// Check accepts a 200 whose body is a JSON array of 20 rows of the table.
func Check(status int, body []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("select20: status %d: %.200s", status, body)
	}
	var rows []row
	if err := json.Unmarshal(body, &rows); err != nil {
		return fmt.Errorf("select20: %w: %.200s", err, body)
	}
	if len(rows) != Rows {
		return fmt.Errorf("select20: %d rows, want %d", len(rows), Rows)
	}
	for i, r := range rows {
		if r.ID == "" || r.Title == "" || r.Body == "" || r.CreatedAt == "" {
			return fmt.Errorf("select20: row %d incomplete: %+v", i, r)
		}
	}
	return nil
}
