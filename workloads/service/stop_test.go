package service

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// Every server stops the same way: once, whoever asks and however often,
// saying first that it had died by itself and then what went wrong
// stopping it.
func TestStopper(t *testing.T) {
	died, failed := errors.New("it had exited by itself"), errors.New("container not removed")
	for _, tt := range []struct {
		name       string
		died, stop error
		want       []error
	}{
		{"clean", nil, nil, nil},
		{"died", died, nil, []error{died}},
		{"stop failed", nil, failed, []error{failed}},
		{"both", died, failed, []error{died, failed}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s Stopper
			var order []string
			var mu sync.Mutex
			note := func(what string, err error) func() error {
				return func() error {
					mu.Lock()
					defer mu.Unlock()
					order = append(order, what)
					return err
				}
			}
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Go(func() { errs[i] = s.Stop(note("died", tt.died), note("stop", tt.stop)) })
			}
			wg.Wait()
			if strings.Join(order, ",") != "died,stop" {
				t.Errorf("asked %v, want died then stop, once", order)
			}
			for _, err := range errs {
				if err != errs[0] {
					t.Errorf("a later Stop returned %v, the first %v", err, errs[0])
				}
				if (err == nil) != (len(tt.want) == 0) {
					t.Errorf("Stop = %v, want %v", err, tt.want)
				}
				for _, w := range tt.want {
					if !errors.Is(err, w) {
						t.Errorf("Stop = %v, lacks %v", err, w)
					}
				}
			}
		})
	}
}

// A server that ended by itself says so at its stop; one stopped does not.
func TestDiedBySelf(t *testing.T) {
	p, _ := start(t, context.Background(), Options{Name: "quitter"}, `echo >ready; exit 3`)
	waitExited(t, p)
	if err := p.DiedBySelf(); err == nil || !strings.Contains(err.Error(), "exited by itself") {
		t.Errorf("an exit nobody asked for: DiedBySelf = %v", err)
	}
	q, _ := start(t, context.Background(), Options{Name: "sleeper"}, `echo >ready; exec sleep 60`)
	q.Stop()
	if err := q.DiedBySelf(); err != nil {
		t.Errorf("after Stop: DiedBySelf = %v, want nil", err)
	}
}
