// Package jsonapi is a JSON API request: a bearer token looked up, then a
// page of 20 posts with their authors, tags and comment counts — four
// queries over one persistent PDO connection per PHP thread. It is the
// report's second workload; the schema and data set are patchproof's.
package jsonapi

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

// Token is a valid API token of the data set (user 1's).
const Token = "tok_000000000000000000000000000000000001"

// PageSize is how many posts every response holds.
const PageSize = 20

// Workload returns the workload.
func Workload() workload.Workload {
	return workload.Workload{
		Name:   "jsonapi",
		Schema: schema,
		Files:  map[string][]byte{"index.php": index},
		Path:   "/index.php",
		Header: http.Header{"Authorization": {"Bearer " + Token}},
		Check:  Check,
	}
}

type response struct {
	User struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	} `json:"user"`
	Page  int `json:"page"`
	Posts []struct {
		ID     int `json:"id"`
		Title  string
		Author struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		} `json:"author"`
		Tags     []string `json:"tags"`
		Comments *int     `json:"comments"`
	} `json:"posts"`
}

// Check accepts a 200 for user 1 with a page of 20 posts, each with an
// author, one to three tags and a comment count.
func Check(status int, body []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("jsonapi: status %d: %.200s", status, body)
	}
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("jsonapi: %w: %.200s", err, body)
	}
	if r.User.ID != 1 {
		return fmt.Errorf("jsonapi: user %d, want 1", r.User.ID)
	}
	if len(r.Posts) != PageSize {
		return fmt.Errorf("jsonapi: %d posts, want %d", len(r.Posts), PageSize)
	}
	for _, p := range r.Posts {
		if p.ID == 0 || p.Author.ID == 0 || p.Author.Name == "" || p.Comments == nil {
			return fmt.Errorf("jsonapi: post %d incomplete", p.ID)
		}
		if n := len(p.Tags); n < 1 || n > 3 {
			return fmt.Errorf("jsonapi: post %d has %d tags, want 1 to 3", p.ID, n)
		}
	}
	return nil
}
