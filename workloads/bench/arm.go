package bench

import (
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/internal/side"
)

// An Arm is one build (a side) with mysqlnd's statistics on or off.
// results.json, bench.txt's pass orders and the report spell it
// "base-on", "base-off", "head-on", "head-off".
type Arm struct {
	Side       side.Side
	Statistics bool
}

func (a Arm) String() string { return string(a.Side) + "-" + onOff(a.Statistics) }

// MarshalText spells a as String does.
func (a Arm) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (a *Arm) UnmarshalText(b []byte) error {
	s, stats, ok := strings.Cut(string(b), "-")
	if !ok || (s != string(side.Base) && s != string(side.Head)) || (stats != "on" && stats != "off") {
		return fmt.Errorf("arm %q: want base-on, base-off, head-on or head-off", b)
	}
	*a = Arm{Side: side.Side(s), Statistics: stats == "on"}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
