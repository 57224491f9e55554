package verdict

import (
	"fmt"
	"testing"
)

func TestCapped(t *testing.T) {
	var ms []Move
	for i := range MaxMoves + 5 {
		ms = append(ms, Move{What: fmt.Sprint(i)})
	}
	if got := Capped(ms[:MaxMoves]); len(got) != MaxMoves || got[MaxMoves-1].What != fmt.Sprint(MaxMoves-1) {
		t.Errorf("%d rows capped to %v", MaxMoves, got)
	}
	got := Capped(ms)
	if len(got) != MaxMoves || got[MaxMoves-1].What != "and 6 more" {
		t.Errorf("%d rows capped to %v", len(ms), got)
	}
	if ms[MaxMoves-1].What != fmt.Sprint(MaxMoves-1) {
		t.Error("Capped wrote into its argument")
	}
}
