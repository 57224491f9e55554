package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The permission endpoint answers each user as -permission and
// -maintainer say, and a user given no role as a reader.
func TestPermissions(t *testing.T) {
	var o options
	o.token, o.login, o.pr, o.base, o.addr = "T", "patchproof-bot", "php/php-src#4242", "master", "127.0.0.1:0"
	o.maintainer, o.appToken = "maintainer", "A" // the plan job's token may read permissions
	for _, p := range []string{"alice=write", "mallory=read", "Eve=triage"} {
		if err := o.permissions.Set(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"alice", "alice=owner", "=write"} {
		if err := o.permissions.Set(bad); err == nil {
			t.Errorf("-permission %s taken", bad)
		}
	}
	o.urlFile = filepath.Join(t.TempDir(), "url")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, io.Discard, o) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	var root string
	for start := time.Now(); root == ""; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(o.urlFile); err == nil && len(b) > 0 {
			root = strings.TrimSpace(string(b))
		} else if time.Since(start) > 10*time.Second {
			t.Fatal("githubfake did not start")
		}
	}
	for user, want := range map[string]string{"maintainer": "write maintain", "alice": "write write",
		"mallory": "read read", "eve": "read triage", "stranger": "read read"} {
		req, _ := http.NewRequest("GET", root+"repos/php/php-src/collaborators/"+user+"/permission", nil)
		req.Header.Set("Authorization", "Bearer A")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Permission string `json:"permission"`
			RoleName   string `json:"role_name"`
		}
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || got.Permission+" "+got.RoleName != want {
			t.Errorf("%s: %+v (%v), want %s", user, got, err, want)
		}
	}
}
