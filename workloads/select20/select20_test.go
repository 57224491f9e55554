package select20

import (
	"fmt"
	"strings"
	"testing"
)

func rows(n int) string {
	var r []string
	for i := range n {
		r = append(r, fmt.Sprintf(`{"id":%d,"title":"Post %d","body":"Lorem","created_at":"2026-01-01 00:01:00"}`, i+1, i+1))
	}
	return "[" + strings.Join(r, ",") + "]"
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		ok     bool
	}{
		{"twenty rows", 200, rows(20), true},
		{"ids as strings, as older PHP sends them", 200, strings.ReplaceAll(rows(20), `"id":1,`, `"id":"1",`), true},
		{"nineteen rows", 200, rows(19), false},
		{"server error", 500, rows(20), false},
		{"php warning before the JSON", 200, "Warning: x\n" + rows(20), false},
		{"a row without a title", 200, strings.Replace(rows(20), `"title":"Post 3"`, `"title":""`, 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.status, []byte(tt.body))
			if (err == nil) != tt.ok {
				t.Errorf("Check: %v, want ok %v", err, tt.ok)
			}
		})
	}
	w := Workload()
	if w.Name != "select20" || len(w.Files["index.php"]) == 0 || len(w.Schema) == 0 {
		t.Errorf("workload %+v", w.Name)
	}
}
