package githubfake_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

// do sends one request to the fake and returns the status, the decoded JSON
// body and the headers.
func do(t *testing.T, f *githubfake.Fake, method, path, token, body string) (int, any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(f.URL(), "/")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var v any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s %s: body %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode, v, resp.Header
}

func newFake(t *testing.T) *githubfake.Fake {
	f := githubfake.New(t)
	f.AddUser("bot", "bot-token")
	f.AddUser("eve", "eve-token")
	f.AddAppToken("github-actions[bot]", "app-token")
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
		Base: githubfake.Branch{Ref: "master", SHA: "aaa"}, Head: githubfake.Branch{Ref: "x", SHA: "bbb"}})
	f.AddPR(githubfake.PR{Owner: "php", Repo: "web", Number: 1,
		Base: githubfake.Branch{Ref: "master", SHA: "ccc"}, Head: githubfake.Branch{Ref: "y", SHA: "ddd"}})
	return f
}

func TestAuthAndPermissions(t *testing.T) {
	f := newFake(t)
	id := f.AddComment("php", "php-src", 1, "bot", "hello")
	tests := []struct {
		method, path, token, body string
		want                      int
	}{
		{"GET", "/user", "bot-token", "", 200},
		{"GET", "/user", "", "", 401},
		{"GET", "/user", "wrong", "", 401},
		{"GET", "/user", "app-token", "", 403},
		{"GET", "/repos/php/php-src/pulls/1", "", "", 200}, // public reads
		{"GET", "/repos/php/php-src/pulls/1", "wrong", "", 401},
		{"GET", "/repos/PHP/PHP-SRC/pulls/1", "", "", 200},
		{"GET", "/repos/php/php-src/pulls/2", "", "", 404},
		{"POST", "/repos/php/php-src/issues/1/comments", "", `{"body":"x"}`, 401},
		{"POST", "/repos/php/php-src/issues/1/comments", "bot-token", `{"body":""}`, 422},
		{"POST", "/repos/php/php-src/issues/1/comments", "bot-token", `{"body":"` + strings.Repeat("x", 65537) + `"}`, 422},
		{"POST", "/repos/php/php-src/issues/2/comments", "bot-token", `{"body":"x"}`, 404},
		{"PATCH", "/repos/php/php-src/issues/comments/" + itoa(id), "eve-token", `{"body":"x"}`, 403},
		{"PATCH", "/repos/php/web/issues/comments/" + itoa(id), "bot-token", `{"body":"x"}`, 404},
		{"DELETE", "/repos/php/php-src/issues/comments/" + itoa(id), "eve-token", "", 403},
		{"PATCH", "/repos/php/php-src/issues/comments/" + itoa(id), "bot-token", `{"body":"edited"}`, 200},
		{"DELETE", "/repos/php/php-src/issues/comments/" + itoa(id), "bot-token", "", 204},
		{"DELETE", "/repos/php/php-src/issues/comments/" + itoa(id), "bot-token", "", 404},
		{"POST", "/repos/php/php-src/statuses/bbb", "bot-token", `{"state":"success"}`, 201},
		{"POST", "/repos/php/php-src/statuses/bbb", "bot-token", `{"state":"passed"}`, 422},
		{"POST", "/repos/php/php-src/statuses/zzz", "bot-token", `{"state":"success"}`, 422},
		{"POST", "/repos/php/php-src/statuses/bbb", "bot-token",
			`{"state":"success","description":"` + strings.Repeat("d", 141) + `"}`, 422},
	}
	for _, tt := range tests {
		got, body, _ := do(t, f, tt.method, tt.path, tt.token, tt.body)
		if got != tt.want {
			t.Errorf("%s %s as %q: %d, want %d (%v)", tt.method, tt.path, tt.token, got, tt.want, body)
		}
	}
	want := []githubfake.Status{{State: "success", Context: "default", Creator: "bot"}}
	if diff := cmp.Diff(want, f.Statuses("php", "php-src", "bbb")); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestPagination(t *testing.T) {
	f := newFake(t)
	for range 250 {
		f.AddComment("php", "php-src", 1, "eve", "x")
	}
	base := strings.TrimSuffix(f.URL(), "/") + "/repos/php/php-src/issues/1/comments"
	tests := []struct {
		query    string
		wantN    int
		wantLink string
	}{
		{"", 30, `<` + base + `?page=2>; rel="next", <` + base + `?page=9>; rel="last"`},
		{"?per_page=100", 100, `<` + base + `?page=2&per_page=100>; rel="next", <` + base + `?page=3&per_page=100>; rel="last"`},
		{"?per_page=100&page=2", 100, `<` + base + `?page=3&per_page=100>; rel="next", <` + base + `?page=3&per_page=100>; rel="last", ` +
			`<` + base + `?page=1&per_page=100>; rel="first", <` + base + `?page=1&per_page=100>; rel="prev"`},
		{"?per_page=100&page=3", 50, `<` + base + `?page=1&per_page=100>; rel="first", <` + base + `?page=2&per_page=100>; rel="prev"`},
		{"?per_page=500&page=4", 0, `<` + base + `?page=1&per_page=500>; rel="first", <` + base + `?page=3&per_page=500>; rel="prev"`},
	}
	for _, tt := range tests {
		code, body, h := do(t, f, "GET", "/repos/php/php-src/issues/1/comments"+tt.query, "", "")
		if code != 200 {
			t.Fatalf("%s: %d", tt.query, code)
		}
		if n := len(body.([]any)); n != tt.wantN {
			t.Errorf("%s: %d comments, want %d", tt.query, n, tt.wantN)
		}
		if diff := cmp.Diff(tt.wantLink, h.Get("Link")); diff != "" {
			t.Errorf("%s: Link (-want +got):\n%s", tt.query, diff)
		}
	}
}

// Statuses list newest first, a page at a time, each with its ID (one
// sequence for every commit) and the time it was set, as GitHub lists
// them; setting one moves no comment ID.
func TestListStatuses(t *testing.T) {
	f := newFake(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var n int
	f.SetClock(func() time.Time { n++; return t0.Add(time.Duration(n) * time.Minute) })
	do(t, f, "POST", "/repos/php/web/statuses/ddd", "bot-token", `{"state":"pending"}`)
	for i := range 35 {
		body := `{"state":"success","context":"c","description":"` + itoa(int64(i)) + `"}`
		if code, b, _ := do(t, f, "POST", "/repos/php/php-src/statuses/bbb", "bot-token", body); code != 201 {
			t.Fatalf("status %d: %d %v", i, code, b)
		}
	}
	base := strings.TrimSuffix(f.URL(), "/") + "/repos/php/php-src/commits/bbb/statuses"
	for _, tt := range []struct {
		query    string
		want     []string // descriptions
		wantLink string
	}{
		{"?per_page=3", []string{"34", "33", "32"}, `<` + base + `?page=2&per_page=3>; rel="next", <` + base + `?page=12&per_page=3>; rel="last"`},
		{"?per_page=3&page=12", []string{"1", "0"}, `<` + base + `?page=1&per_page=3>; rel="first", <` + base + `?page=11&per_page=3>; rel="prev"`},
		{"?per_page=3&page=13", nil, `<` + base + `?page=1&per_page=3>; rel="first", <` + base + `?page=12&per_page=3>; rel="prev"`},
	} {
		code, body, h := do(t, f, "GET", "/repos/php/php-src/commits/bbb/statuses"+tt.query, "", "")
		if code != 200 {
			t.Fatalf("%s: %d", tt.query, code)
		}
		var got []string
		for _, it := range body.([]any) {
			got = append(got, it.(map[string]any)["description"].(string))
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: descriptions (-want +got):\n%s", tt.query, d)
		}
		if d := cmp.Diff(tt.wantLink, h.Get("Link")); d != "" {
			t.Errorf("%s: Link (-want +got):\n%s", tt.query, d)
		}
	}
	_, body, h := do(t, f, "GET", "/repos/php/php-src/commits/bbb/statuses", "", "")
	if items := body.([]any); len(items) != 30 || h.Get("Link") == "" {
		t.Errorf("default page: %d statuses, Link %q; want 30 and a next page", len(items), h.Get("Link"))
	}
	newest := body.([]any)[0].(map[string]any)
	if newest["id"] != float64(36) || newest["created_at"] != "2025-06-01T12:36:00Z" || newest["context"] != "c" ||
		newest["creator"].(map[string]any)["login"] != "bot" {
		t.Errorf("newest status %v: want ID 36 (after php/web's), set at 12:36, context c, by bot", newest)
	}
	if _, c, _ := do(t, f, "POST", "/repos/php/php-src/issues/1/comments", "bot-token", `{"body":"x"}`); c.(map[string]any)["id"] != float64(1001) {
		t.Errorf("the first comment after statuses has ID %v, want 1001", c.(map[string]any)["id"])
	}
}

func TestIDsIncreaseAcrossRepositories(t *testing.T) {
	f := newFake(t)
	var last float64
	for i, path := range []string{"/repos/php/php-src/issues/1/comments", "/repos/php/web/issues/1/comments", "/repos/php/php-src/issues/1/comments"} {
		_, body, _ := do(t, f, "POST", path, "bot-token", `{"body":"x"}`)
		id := body.(map[string]any)["id"].(float64)
		if id <= last {
			t.Errorf("comment %d has ID %v after %v", i, id, last)
		}
		if author := body.(map[string]any)["user"].(map[string]any)["login"]; author != "bot" {
			t.Errorf("author %v, want bot", author)
		}
		last = id
	}
}

func TestFaults(t *testing.T) {
	f := newFake(t)
	reset := time.Unix(2000000000, 0)
	f.FailNext("GET", "/repos/php/php-src/pulls", 502, 2)
	f.Inject("", "/repos/", 1, githubfake.PrimaryRateLimit(403, reset))
	f.Inject("GET", "/repos/php/php-src/pulls", 1, githubfake.SecondaryRateLimit(429, 30*time.Second))

	type answer struct {
		Code                 int
		Remaining, Reset, RA string
	}
	var got []answer
	for range 6 {
		code, _, h := do(t, f, "GET", "/repos/php/php-src/pulls/1", "", "")
		got = append(got, answer{code, h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), h.Get("Retry-After")})
		if code == 200 {
			got[len(got)-1].Reset = "later"
		}
	}
	want := []answer{
		{Code: 502, Remaining: "4999", Reset: got[0].Reset},
		{Code: 502, Remaining: "4999", Reset: got[1].Reset},
		{Code: 403, Remaining: "0", Reset: "2000000000"},
		{Code: 429, Remaining: "4999", Reset: got[3].Reset, RA: "30"},
		{Code: 200, Remaining: "4999", Reset: "later"},
		{Code: 200, Remaining: "4999", Reset: "later"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if n := f.Count("GET", "/repos/php/php-src/pulls/1"); n != 6 {
		t.Errorf("Count = %d, want 6", n)
	}
}

func TestBranches(t *testing.T) {
	f := newFake(t)
	f.AddBranch("php", "php-src", "PHP-8.4", "abcdef0123456789abcdef0123456789abcdef01")
	for _, tt := range []struct {
		path string
		want int
		sha  string
	}{
		{"/repos/php/php-src/branches/PHP-8.4", 200, "abcdef0123456789abcdef0123456789abcdef01"},
		{"/repos/PHP/PHP-SRC/branches/PHP-8.4", 200, "abcdef0123456789abcdef0123456789abcdef01"},
		{"/repos/php/php-src/branches/php-8.4", 404, ""}, // branch names are case-sensitive
		{"/repos/php/php-src/branches/master", 200, "aaa"},
		{"/repos/php/php-src/branches/x", 200, "bbb"}, // the PR's head, in the PR's repository
		{"/repos/php/php-src/branches/rerun", 404, ""},
		{"/repos/nobody/nothing/branches/master", 404, ""},
	} {
		code, body, _ := do(t, f, "GET", tt.path, "", "")
		if code != tt.want {
			t.Errorf("%s: %d, want %d (%v)", tt.path, code, tt.want, body)
			continue
		}
		if code == 200 && body.(map[string]any)["commit"].(map[string]any)["sha"] != tt.sha {
			t.Errorf("%s: %v, want commit %s", tt.path, body, tt.sha)
		}
	}
}

func TestCommentsSince(t *testing.T) {
	f := newFake(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		f.SetClock(func() time.Time { return t0.Add(time.Duration(i) * time.Hour) })
		f.AddComment("php", "php-src", 1, "bot", fmt.Sprint(i))
	}
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"", 3},
		{"?since=2025-06-01T13:00:00Z", 2},
		{"?since=2025-06-01T14:00:01Z", 0},
	} {
		code, body, _ := do(t, f, "GET", "/repos/php/php-src/issues/1/comments"+tt.query, "", "")
		if code != 200 || len(body.([]any)) != tt.want {
			t.Errorf("%s: %d, %d comments, want %d", tt.query, code, len(body.([]any)), tt.want)
		}
	}
	if code, _, _ := do(t, f, "GET", "/repos/php/php-src/issues/1/comments?since=yesterday", "", ""); code != 422 {
		t.Errorf("since=yesterday: %d, want 422", code)
	}
}
