package ghactions

import "testing"

func TestEscape(t *testing.T) {
	for _, tt := range []struct {
		name, in, message, property string
	}{
		{"plain", "ext/mysqlnd/mysqlnd.c", "ext/mysqlnd/mysqlnd.c", "ext/mysqlnd/mysqlnd.c"},
		{"lines", "a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"percent first", "100%0A", "100%250A", "100%250A"},
		{"a command inside", "x\n::error::y", "x%0A::error::y", "x%0A%3A%3Aerror%3A%3Ay"},
		{"a property's end", "a.c,line=1::m", "a.c,line=1::m", "a.c%2Cline=1%3A%3Am"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Message(tt.in); got != tt.message {
				t.Errorf("Message = %q, want %q", got, tt.message)
			}
			if got := Property(tt.in); got != tt.property {
				t.Errorf("Property = %q, want %q", got, tt.property)
			}
		})
	}
}
