package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// workflowJob returns the text of one job of validate.yml: from its
// "  NAME:" line to the next job's.
func workflowJob(t *testing.T, name string) (workflow, job string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "validate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	workflow = string(b)
	start := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + `:\n`).FindStringIndex(workflow)
	if start == nil {
		t.Fatalf("validate.yml has no job %q", name)
	}
	rest := workflow[start[1]:]
	if end := regexp.MustCompile(`(?m)^  [a-z][a-z-]*:\n`).FindStringIndex(rest); end != nil {
		rest = rest[:end[0]]
	}
	return workflow, rest
}

// A second trigger for the head in progress queues behind it; only a head
// that moved cancels the run (the plan's supersedes output, which
// TestPlanAnswerSupersedes checks): the validate jobs are grouped per pull
// request and target, cancel only on supersedes, and nothing groups the
// workflow as a whole (which would hold the plan's answers back, or cancel
// a run for "also do PHP-8.4").
func TestWorkflowQueuesSecondTrigger(t *testing.T) {
	workflow, validate := workflowJob(t, "validate")
	if regexp.MustCompile(`(?m)^concurrency:`).MatchString(workflow) {
		t.Error("validate.yml has a workflow-wide concurrency group: a second trigger would wait for, or cancel, the whole run")
	}
	group := regexp.MustCompile(`(?m)^    concurrency:\n      group: (.+)\n      cancel-in-progress: (.+)\n`).FindStringSubmatch(validate)
	if group == nil {
		t.Fatalf("the validate job has no concurrency group:\n%s", validate)
	}
	for _, part := range []string{"needs.plan.outputs.repo", "needs.plan.outputs.pr", "matrix.slug"} {
		if !strings.Contains(group[1], part) {
			t.Errorf("the validate jobs' group %q lacks %s: jobs of different PRs or targets would queue behind each other", group[1], part)
		}
	}
	if got := strings.TrimSpace(group[2]); got != "${{ needs.plan.outputs.supersedes == 'true' }}" {
		t.Errorf("cancel-in-progress is %q: want it only when the plan says the head moved (supersedes)", got)
	}
	_, plan := workflowJob(t, "plan")
	if strings.Contains(plan, "concurrency:") {
		t.Error("the plan job is in a concurrency group: its answer on the PR (pending status, reply) would wait for the run in progress")
	}
}

// doctor checks what the planned stages need: a comment's stages=codediff,tests
// needs no perf, and must not be refused for the benchmark's profile.
func TestWorkflowDoctorChecksPlannedStages(t *testing.T) {
	_, validate := workflowJob(t, "validate")
	doctor := regexp.MustCompile(`(?m)^\s*bin/patchproof doctor (.*)$`).FindStringSubmatch(validate)
	if doctor == nil {
		t.Fatal("the validate job does not run patchproof doctor")
	}
	if !strings.Contains(doctor[1], `--stages "$STAGES"`) || !strings.Contains(doctor[1], `--builder "$BUILDER"`) {
		t.Errorf("doctor runs as %q: want the job's --builder and its planned --stages", doctor[1])
	}
}

// The runners build php-src CI's debug ZTS variant besides NTS and ZTS
// (its suites count LEAK and XLEAK), and validate-job passes the variants
// on: a comment's stages= or the rehearsal's --variants still narrow them.
func TestWorkflowBuildsDebugZTS(t *testing.T) {
	_, validate := workflowJob(t, "validate")
	m := regexp.MustCompile(`(?m)^      VARIANTS: \$\{\{ vars\.PATCHPROOF_VARIANTS \|\| '([a-z,-]+)' \}\}$`).FindStringSubmatch(validate)
	if m == nil || !strings.Contains(","+m[1]+",", ",debug-zts,") || !strings.Contains(m[1], "nts,zts") {
		t.Errorf("the validate job's VARIANTS default is %v: want nts,zts and debug-zts", m)
	}
	job, err := os.ReadFile(filepath.Join("..", "..", "scripts", "validate-job"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(job), `args+=(--variants "$VARIANTS")`) {
		t.Error("scripts/validate-job does not pass $VARIANTS to patchproof run")
	}
}

// The plan's merge-up list reaches every validate job, as the backports
// do: each job computes the same plan.
func TestWorkflowPassesMergeUp(t *testing.T) {
	workflow, validate := workflowJob(t, "validate")
	for _, want := range []string{"      merge_up: ${{ steps.plan.outputs.merge_up }}", "      merge_up:\n        description:"} {
		if !strings.Contains(workflow, want) {
			t.Errorf("validate.yml lacks %q", want)
		}
	}
	if !strings.Contains(validate, "      MERGE_UP: ${{ needs.plan.outputs.merge_up }}") {
		t.Error("the validate job does not get the plan's merge_up")
	}
	job, err := os.ReadFile(filepath.Join("..", "..", "scripts", "validate-job"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(job), `args+=(--merge-up "$MERGE_UP")`) {
		t.Error("scripts/validate-job does not pass $MERGE_UP to patchproof run")
	}
}

// The report job lists the run's artifacts (it may read them: actions:
// read) and hands the list to scripts/report-job, which passes it to
// report --artifacts: the comment's links are of this run's uploads.
func TestWorkflowReportLinksArtifacts(t *testing.T) {
	_, rep := workflowJob(t, "report")
	for _, want := range []string{
		"      actions: read",
		`gh api --paginate "repos/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID/artifacts?per_page=100"`,
		`--jq '.artifacts[] | {id, name, expired}' >"$RUNNER_TEMP/artifacts.jsonl"`,
		"          ARTIFACTS: ${{ runner.temp }}/artifacts.jsonl",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("the report job lacks %q", want)
		}
	}
	if strings.Index(rep, "artifacts.jsonl\"") > strings.Index(rep, "scripts/report-job") {
		t.Error("the report job lists the artifacts after it reports")
	}
	job, err := os.ReadFile(filepath.Join("..", "..", "scripts", "report-job"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(job), `if [ -s "${ARTIFACTS:-}" ]; then links=(--artifacts "$ARTIFACTS"); fi`) {
		t.Error("scripts/report-job does not pass a non-empty $ARTIFACTS to patchproof report --artifacts")
	}
	// The list costs the links when it fails, never the verdict.
	step := rep[strings.Index(rep, "- name: List the run's artifacts"):]
	step = step[:strings.Index(step[1:], "- ")+1]
	if !strings.Contains(step, "continue-on-error: true") {
		t.Errorf("the listing step can fail the report job:\n%s", step)
	}
}
