package race

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJudgeCounters(t *testing.T) {
	per := map[string]int64{"bytes_sent": 310, "rows_fetched_from_server_normal": 20, "active_connections": 0, "connect_success": 2}
	tests := []struct {
		name      string
		grew      map[string]int64
		dbConns   int64
		wantOff   []Counter
		wantLost  int64
		wantExact bool
		wantWork  bool
	}{
		{
			name:      "exact",
			grew:      map[string]int64{"bytes_sent": 3100, "rows_fetched_from_server_normal": 200, "active_connections": 0, "connect_success": 20},
			dbConns:   20,
			wantExact: true,
		},
		{
			name:    "lost updates and a gauge that drifted",
			grew:    map[string]int64{"bytes_sent": 3100, "rows_fetched_from_server_normal": 197, "active_connections": 1, "connect_success": 20},
			dbConns: 20,
			wantOff: []Counter{
				{Name: "active_connections", Expected: 0, Got: 1, Lost: -1},
				{Name: "rows_fetched_from_server_normal", PerRequest: 20, Expected: 200, Got: 197, Lost: 3},
			},
			// The gauge's drift is no lost update.
			wantLost: 3,
		},
		{
			name:    "a counter the serial runs never saw",
			grew:    map[string]int64{"bytes_sent": 3100, "rows_fetched_from_server_normal": 200, "active_connections": 0, "connect_success": 20, "new_one": 4},
			dbConns: 20,
			wantOff: []Counter{{Name: "new_one", Expected: 0, Got: 4, Lost: -4}},

			wantLost: -4,
		},
		{
			name:     "the load lost requests",
			grew:     map[string]int64{"bytes_sent": 3100, "rows_fetched_from_server_normal": 200, "active_connections": 0, "connect_success": 20},
			dbConns:  18,
			wantWork: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := JudgeCounters(CounterRun{Requests: 10, PerRequest: per, Grew: tt.grew, DBConnections: tt.dbConns, ConnsPerReq: 2})
			if diff := cmp.Diff(tt.wantOff, c.Off); diff != "" {
				t.Errorf("off (-want +got):\n%s", diff)
			}
			if c.Lost != tt.wantLost || c.Exact() != tt.wantExact || (c.WorkError != "") != tt.wantWork {
				t.Errorf("lost %d exact %v work %q, want %d %v %v", c.Lost, c.Exact(), c.WorkError, tt.wantLost, tt.wantExact, tt.wantWork)
			}
			if c.Counters != 3 || c.Updates != 30 {
				t.Errorf("counters %d updates %d, want 3 and 30", c.Counters, c.Updates)
			}
		})
	}
}
