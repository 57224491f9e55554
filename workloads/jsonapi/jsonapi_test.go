package jsonapi

import (
	"encoding/json"
	"testing"
)

func page(mutate func(map[string]any)) []byte {
	var posts []any
	for i := range PageSize {
		posts = append(posts, map[string]any{
			"id": 1000 - i, "title": "Post", "body": "Lorem", "created_at": "2026-01-01 16:40:00",
			"author": map[string]any{"id": 38, "name": "User 38"}, "tags": []string{"tag-1", "tag-4"}, "comments": i % 3,
		})
	}
	r := map[string]any{"user": map[string]any{"id": 1, "name": "User 1"}, "page": 0, "posts": posts}
	if mutate != nil {
		mutate(r)
	}
	b, _ := json.Marshal(r)
	return b
}

func TestCheck(t *testing.T) {
	post := func(r map[string]any) map[string]any { return r["posts"].([]any)[3].(map[string]any) }
	tests := []struct {
		name   string
		status int
		body   []byte
		ok     bool
	}{
		{"a page", 200, page(nil), true},
		{"bad token", 401, []byte(`{"error":"bad token"}`), false},
		{"other user", 200, page(func(r map[string]any) { r["user"] = map[string]any{"id": 2} }), false},
		{"short page", 200, page(func(r map[string]any) { r["posts"] = r["posts"].([]any)[:19] }), false},
		{"no tags", 200, page(func(r map[string]any) { post(r)["tags"] = []string{} }), false},
		{"no comment count", 200, page(func(r map[string]any) { delete(post(r), "comments") }), false},
		{"no author", 200, page(func(r map[string]any) { delete(post(r), "author") }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.status, tt.body)
			if (err == nil) != tt.ok {
				t.Errorf("Check: %v, want ok %v", err, tt.ok)
			}
		})
	}
	if h := Workload().Header.Get("Authorization"); h != "Bearer "+Token {
		t.Errorf("Authorization %q", h)
	}
}
