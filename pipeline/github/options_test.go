package github

import (
	"testing"
	"time"
)

// The timeout's default lives in one place, and the zero Options gets it.
func TestTimeoutDefault(t *testing.T) {
	for _, tt := range []struct {
		set, want time.Duration
	}{
		{0, DefaultTimeout},
		{-1, 0}, // none
		{5 * time.Second, 5 * time.Second},
	} {
		if got := (Options{Timeout: tt.set}).withDefaults().Timeout; got != tt.want {
			t.Errorf("Options{Timeout: %v} has timeout %v, want %v", tt.set, got, tt.want)
		}
	}
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.gh.Client().Transport.(*retryTransport).timeout; got != DefaultTimeout {
		t.Errorf("the zero Options' client has timeout %v, want %v", got, DefaultTimeout)
	}
}
