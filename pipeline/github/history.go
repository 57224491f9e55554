package github

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/patchproof/patchproof/internal/markdown"
)

// HistoryEntry is one run as the sticky comment's list of earlier runs
// shows it, so that a reviewer sees after a force-push whether a revision
// helped.
type HistoryEntry struct {
	Run     string `json:"run"`            // the run's stamp, as Comment.Run
	Head    string `json:"head"`           // the head commit validated, hex
	Verdict string `json:"verdict"`        // passed, failed, error, incomplete
	Cost    string `json:"cost,omitempty"` // the CPU cost of statistics, with its interval, as the report words it
}

// MaxHistory bounds the earlier-runs list and its marker, in characters,
// together: the report leaves this much room under GitHub's limit.
const MaxHistory = 3000

// history is what a comment carries of the runs it showed: the run it
// shows now, and the ones before, newest first.
type history struct {
	Current *HistoryEntry  `json:"current,omitempty"`
	Earlier []HistoryEntry `json:"earlier,omitempty"`
}

// The history is kept in a hidden marker on the comment's last line,
// base64 so that nothing in it can end the HTML comment, and read back
// from our own comments only (listOurs).
const historyPrefix = "<!-- patchproof:history v1 "

var (
	historyRE = regexp.MustCompile(`(?m)^<!-- patchproof:history v1 ([A-Za-z0-9+/=]*) -->\r?$`)
	hexRE     = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	wordRE    = regexp.MustCompile(`^[a-z ]{1,20}$`)
)

// parseHistory reads the history marker of a body; none, or one that does
// not parse (a hand edit), is an empty history. Entries that are not what
// patchproof writes are dropped.
func parseHistory(body string) history {
	m := historyRE.FindAllStringSubmatch(body, -1)
	if len(m) == 0 {
		return history{}
	}
	data, err := base64.StdEncoding.DecodeString(m[len(m)-1][1])
	if err != nil {
		return history{}
	}
	var h history
	if json.Unmarshal(data, &h) != nil {
		return history{}
	}
	if h.Current != nil && !h.Current.valid() {
		h.Current = nil
	}
	var kept []HistoryEntry
	for _, e := range h.Earlier {
		if e.valid() {
			kept = append(kept, e)
		}
	}
	h.Earlier = kept
	return h
}

func (e HistoryEntry) valid() bool {
	return validRun(e.Run) && hexRE.MatchString(e.Head) && wordRE.MatchString(e.Verdict) &&
		utf8.RuneCountInString(e.Cost) <= 200
}

// next is the history of a comment that replaces one with history prev:
// prev's current run joins the earlier ones, newest first, a run listed
// once; cur (nil: this run says nothing of itself) is the new current.
func (prev history) next(cur *HistoryEntry) history {
	h := history{Current: cur}
	seen := map[string]bool{}
	if cur != nil {
		seen[cur.Run] = true
	}
	add := func(e HistoryEntry) {
		if !seen[e.Run] {
			seen[e.Run] = true
			h.Earlier = append(h.Earlier, e)
		}
	}
	if prev.Current != nil {
		add(*prev.Current)
	}
	for _, e := range prev.Earlier {
		add(e)
	}
	return h
}

// render is the collapsed list of earlier runs and the marker, within
// MaxHistory: the oldest runs are dropped, from the list and the marker
// alike, until it fits. "" when there is nothing to keep.
func (h history) render() string {
	for {
		s := h.renderAll()
		if utf8.RuneCountInString(s) <= MaxHistory || len(h.Earlier) == 0 {
			return s
		}
		h.Earlier = h.Earlier[:len(h.Earlier)-1]
	}
}

func (h history) renderAll() string {
	if h.Current == nil && len(h.Earlier) == 0 {
		return ""
	}
	var b strings.Builder
	if len(h.Earlier) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>Earlier runs (%d)</summary>\n\n", len(h.Earlier))
		b.WriteString("| run | head | verdict | CPU cost of statistics |\n|---|---|---|---|\n")
		for _, e := range h.Earlier {
			head := e.Head
			if len(head) > 12 {
				head = head[:12]
			}
			cost := markdown.Text(e.Cost)
			if cost == "" {
				cost = "—"
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", markdown.Text(e.Run), head, markdown.Text(e.Verdict), cost)
		}
		b.WriteString("\n</details>\n")
	}
	data, err := json.Marshal(h)
	if err != nil {
		panic(err) // strings only
	}
	b.WriteString("\n" + historyPrefix + base64.StdEncoding.EncodeToString(data) + " -->\n")
	return b.String()
}

// withHistory is body with the history that replacing prevBody (""
// for none) by a run of cur makes.
func withHistory(body, prevBody string, cur *HistoryEntry) string {
	h := parseHistory(prevBody).next(cur)
	s := h.render()
	if s == "" {
		return body
	}
	return strings.TrimRight(body, "\n") + "\n" + s
}
