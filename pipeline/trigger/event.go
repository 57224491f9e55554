package trigger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Event names, as $GITHUB_EVENT_NAME has them.
const (
	Dispatch = "workflow_dispatch"
	Comment  = "issue_comment"
	Label    = "pull_request_target"
)

// event is the part of a webhook payload the plan reads.
type event struct {
	Action string `json:"action"`
	Sender struct {
		Login string `json:"login"`
	} `json:"sender"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`

	// workflow_dispatch. A number input may come as a JSON number or as a
	// string, depending on how the run was started.
	Inputs map[string]json.RawMessage `json:"inputs"`

	// issue_comment
	Issue struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Comment struct {
		ID        int64     `json:"id"`
		Body      string    `json:"body"`
		CreatedAt time.Time `json:"created_at"`
		User      struct {
			Login string `json:"login"`
		} `json:"user"`
	} `json:"comment"`

	// pull_request_target
	PullRequest struct {
		Number int `json:"number"`
		Head   struct {
			SHA string `json:"sha"`
		} `json:"head"`
	} `json:"pull_request"`
	Label struct {
		Name string `json:"name"`
	} `json:"label"`
}

func parseEvent(data []byte) (*event, error) {
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("not a GitHub event payload: %w", err)
	}
	return &ev, nil
}

// isPR reports whether an issue_comment's issue is a pull request: only
// then does the payload carry a non-null issue.pull_request.
func (ev *event) isPR() bool {
	p := bytes.TrimSpace(ev.Issue.PullRequest)
	return len(p) > 0 && !bytes.Equal(p, []byte("null"))
}

// input returns a workflow_dispatch input as text, and whether it was
// given at all.
func (ev *event) input(name string) (string, bool, error) {
	raw, ok := ev.Inputs[name]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), true, nil
	}
	return "", true, refusef("input %s: want a string or a number, got %s", name, strconv.Quote(string(raw)))
}
