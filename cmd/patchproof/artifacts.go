package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/patchproof/patchproof/internal/safefs"
	"github.com/patchproof/patchproof/pipeline/results"
)

// maxArtifactsFile bounds --artifacts: a run has a few artifacts a target,
// and a page of the API's list is about 1 KB an artifact.
const maxArtifactsFile = 4 << 20

// artifactName is what a validate job's uploads are named
// (validate.yml: patchproof-KIND-SLUG); any other artifact of the run is
// not the comment's to link.
var artifactName = regexp.MustCompile(`^patchproof-(results|evidence|logs)-[A-Za-z0-9._-]{1,200}$`)

// readArtifacts reads the run's artifacts as the report job lists them
// (gh api --paginate repos/R/actions/runs/ID/artifacts: one or more pages,
// each {"artifacts": [{"id": N, "name": S, ...}]}, or objects of their own
// a line each with --jq '.artifacts[] | {id, name, expired}') and returns each
// validate-job artifact's link: runURL/artifacts/ID, the page GitHub
// serves its download from. The link is made of this job's own run URL
// and a number, so nothing a runner wrote reaches the comment through it.
// Of two artifacts of one name (a re-run attempt) the newer, larger id
// wins.
func readArtifacts(path, runURL string) (map[string]string, error) {
	bad := func(err error) error { return &results.InputError{Input: "--artifacts " + path, Err: err} }
	if runURL == "" {
		return nil, bad(errors.New("the links are of this run: it needs GITHUB_SERVER_URL, GITHUB_REPOSITORY and GITHUB_RUN_ID"))
	}
	data, err := safefs.ReadPath(path, maxArtifactsFile)
	if err != nil {
		return nil, bad(err)
	}
	type artifact struct {
		ID      json.RawMessage `json:"id"`
		Name    string          `json:"name"`
		Expired bool            `json:"expired"`
	}
	ids := map[string]int64{}
	// Only the validate jobs' artifacts are read: another of the run's is
	// none of the comment's business, whatever its id.
	add := func(a artifact) error {
		if !artifactName.MatchString(a.Name) || a.Expired {
			return nil
		}
		id, err := strconv.ParseInt(string(a.ID), 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("artifact %q has id %q, not a positive integer", a.Name, a.ID)
		}
		ids[a.Name] = max(ids[a.Name], id)
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var v struct {
			artifact
			Artifacts *[]artifact `json:"artifacts"`
		}
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, bad(fmt.Errorf("not the API's list of artifacts: %w", err))
		}
		list := []artifact{v.artifact}
		if v.Artifacts != nil {
			list = *v.Artifacts
		}
		for _, a := range list {
			if err := add(a); err != nil {
				return nil, bad(err)
			}
		}
	}
	links := map[string]string{}
	for name, id := range ids {
		links[name] = runURL + "/artifacts/" + strconv.FormatInt(id, 10)
	}
	return links, nil
}
