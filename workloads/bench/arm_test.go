package bench

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/side"
)

func TestArmJSON(t *testing.T) {
	in := Pass{Pass: 1, Order: []Arm{{side.Base, true}, {side.Head, false}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"pass":1,"order":["base-on","head-off"]}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	var back Pass
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, back); d != "" {
		t.Errorf("round trip (-wrote +read):\n%s", d)
	}
	if err := json.Unmarshal([]byte(`{"order":["base-maybe"]}`), &back); err == nil {
		t.Error("base-maybe read as an arm")
	}
}
