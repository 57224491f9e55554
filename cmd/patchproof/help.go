package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// manual is what a subcommand's --help says beside its flags.
type manual struct {
	usage    string // the synopsis, after "Usage: "
	about    string // what it does, a few paragraphs
	examples string // command lines, a comment line each
	exit     string // its exit statuses
	env      string // the environment variables it reads
}

// Environment variables several commands read, worded once.
const (
	envGitHub = `  GITHUB_TOKEN, GH_TOKEN   the token posts are made with (never printed)
  PATCHPROOF_GITHUB_API    the GitHub REST API root (--github-api)
  PATCHPROOF_GITHUB_LOGIN  the account an App or Actions token posts as
  GITHUB_ACTIONS           "true" under GitHub Actions: log groups, and github-actions[bot] as the login
  GITHUB_RUN_ID            orders the runs that post (an older run never overwrites a newer one's)
  GITHUB_SERVER_URL, GITHUB_REPOSITORY  with GITHUB_RUN_ID, the link to the run
  GITHUB_STEP_SUMMARY      a file the summary is appended to
`
	envCache = `  PATCHPROOF_CACHE         the cache directory (--cache; default ~/.cache/patchproof)
`
	exitChecks = `  0  every check passed
  1  a check failed
  2  patchproof could not run, the run did not finish or checked nothing, or bad input (a flag error: one line, then see --help)
`
)

var manuals = map[string]manual{
	"run": {
		usage: "patchproof run [--pr N | --repo URL|PATH --base REF --head REF] [flags]",
		about: `Validates a php-src change: checks out base and head (and each backport
target), builds them NTS and ZTS, compares NTS machine code, runs the MySQL
test suites base against head, runs the concurrency check and the
contention benchmark, and writes results.json, summary.md and logs to --out.
With --post the summary becomes the pull request's sticky comment and the
head commit gets a status. With no source it validates the bundled demo.

How long it takes, measured on a 2-core VM (the demo): builds 4 to 9
minutes a base build (NTS, ZTS, TSan), 1 to 1.5 minutes a head build
(ccache); tests about 2 minutes; race under a minute; bench quick about 3
to 8 minutes; the whole demo 22 to 35 minutes from a fresh clone. A
laptop's quick try (--stages checkout,build,codediff,tests: a check
needs the trees and the builds) costs the NTS and ZTS builds and the
suites: about 15 minutes there, a few minutes warm (the builds cached).`,
		examples: `  # the bundled demo, offline
  patchproof run
  # a maintainer's laptop: a local branch against PHP-8.4, the quick checks only
  patchproof run --repo ~/src/php-src --base PHP-8.4 --head my-branch --stages checkout,build,codediff,tests
  # a pull request of php/php-src, with its backports, posted
  patchproof run --pr 24448 --base master --backport-to PHP-8.4,PHP-8.5 --post
  # the bare-metal profile, with a thread sweep
  patchproof run --pr 24448 --bench report --threads 1,2,4,8,16,32`,
		exit: exitChecks,
		env: envCache + `  PATCHPROOF_DEBIAN_MIRROR the Debian mirror of the demo's source package and the Docker images (default the machine's apt sources)
  DOCKER_HOST              the Docker engine of --builder docker
` + envGitHub,
	},
	"codediff": {
		usage: "patchproof codediff [--json] [--objects GLOB] BASE HEAD",
		about: `Compares the machine code of every function in the object files selected in
BASE and HEAD (build trees or directories of .o files), relocation-aware, and
prints the counts and a disassembly diff of each changed function.`,
		examples: `  patchproof codediff patchproof-out/builds/base-nts patchproof-out/builds/head-nts
  patchproof codediff --json --objects 'ext/mysqli/*.o' base/ head/`,
		exit: `  0  every function is the same machine code
  1  a function changed, was added or was removed; or HEAD's objects are beyond
     what the parser reads (a section larger than its file or its bound, a
     decompression bomb), or crash it in its child (4 GiB, 300 s of CPU)
  2  bad input (a flag error: one line, then see --help), or the objects could not be read
`,
		env: "  (none)\n",
	},
	"report": {
		usage: "patchproof report [--merge] [flags] [results.json...]",
		about: reportAbout,
		examples: `  # the summary of a run, again
  patchproof report patchproof-out/results.json
  # the validation workflow's report job: every target's results, one comment
  patchproof report --post --pr 24448 --expect-targets master,PHP-8.4 --merge */results.json
  # what would be posted
  patchproof report --dry-run patchproof-out/results.json`,
		exit: exitChecks,
		env:  envGitHub,
	},
	"doctor": {
		usage: "patchproof doctor [--builder host|docker] [--stages LIST] [--cache DIR] [--json]",
		about: `Checks this machine for what the selected stages need: each stage's host
tools (and one apt-get install line for the missing ones), perf and
kernel.perf_event_paranoid for the benchmark's profile, cgroup v2 for CPU
accounting, the free disk in the cache, and the Docker engine with
--builder docker. --json prints the checks as JSON.`,
		examples: `  patchproof doctor
  patchproof doctor --builder docker --json
  # a laptop that runs only the quick checks
  patchproof doctor --stages checkout,build,codediff,tests`,
		exit: `  0  everything a selected stage needs is there
  2  something required is missing, or bad input (a flag error: one line, then see --help)
`,
		env: envCache + "  PATCHPROOF_DEBIAN_MIRROR the Debian mirror the images of --builder docker are made from (default the machine's apt sources)\n" +
			"  DOCKER_HOST              the Docker engine of --builder docker\n",
	},
	"plan": {
		usage: "patchproof plan [--event FILE] [--event-name NAME] [--output FILE] [--answer]",
		about: planAbout,
		examples: `  # the validation workflow's plan job
  patchproof plan --answer --tool-ref "$(git rev-parse HEAD)"
  # try an event payload against a local GitHub
  patchproof plan --event event.json --event-name issue_comment --github-api http://127.0.0.1:8080/api/v3/`,
		exit: `  0  planned (the outputs are written), or /patchproof help answered
  2  the trigger was refused (one ::error:: line, no outputs), GitHub failed, or bad input
`,
		env: `  GITHUB_EVENT_PATH, GITHUB_EVENT_NAME  the event (--event, --event-name)
  GITHUB_OUTPUT            where the outputs go (--output)
  GITHUB_REPOSITORY, GITHUB_SHA  the workflow's repository and commit (--repository, --sha)
  GITHUB_API_URL           the REST API root, after PATCHPROOF_GITHUB_API
  DEFAULT_BACKPORT_TO, DEFAULT_BUILDER, TOOL_REPOSITORY, TOOL_REF  the workflow's settings (--default-*, --tool-*)
  GITHUB_TOKEN, GH_TOKEN   the token the plan reads and answers with (never printed)
  PATCHPROOF_GITHUB_API    the GitHub REST API root (--github-api)
  PATCHPROOF_GITHUB_LOGIN, GITHUB_ACTIONS  the account the token answers as (--github-login)
  GITHUB_RUN_ID, GITHUB_SERVER_URL  the run the statuses name and link (--run-id, --run-url)
`,
	},
	"cache": {
		usage: "patchproof cache [prune [--dry-run]] [--cache DIR] [--cache-max SIZE]",
		about: `Lists the cache's builds, least recently used (the next to be pruned)
first, with their size, last use and lock, and the total against the limit.
'cache prune' removes builds down to the limit as a run does.`,
		examples: `  patchproof cache
  patchproof cache prune --cache-max 20GiB --dry-run`,
		exit: `  0  listed or pruned
  2  the cache could not be read, or bad input (a flag error: one line, then see --help)
`,
		env: envCache,
	},
}

// flagSet is a subcommand's flags: parse errors are one line, --help its
// manual on stdout.
type flagSet struct {
	*flag.FlagSet
	cmd    string // run, plan, cache prune, ...
	stdout io.Writer
}

// newFlagSet returns the flags of subcommand cmd. Nothing is printed while
// parsing: parseFlags says what went wrong, or prints the manual.
func newFlagSet(cmd string, stdout io.Writer) *flagSet {
	fs := flag.NewFlagSet("patchproof "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, cmd: cmd, stdout: stdout}
}

func parseFlags(fs *flagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fs.writeHelp(fs.stdout)
			return errHelp
		}
		return fs.usageErrorf("%s", flagSpelling.ReplaceAllString(err.Error(), "$1--"))
	}
	return nil
}

// flagSpelling finds a flag's name in the flag package's errors, which
// spell it with one dash: the manual and the examples spell it with two.
var flagSpelling = regexp.MustCompile(`(defined: |argument: |for flag |for )-`)

// usageErrorf is bad input on the command line, one line that says where
// to read more.
func (fs *flagSet) usageErrorf(format string, a ...any) error {
	return usageErrorf("%s: %s (see patchproof %s --help)", fs.cmd, fmt.Sprintf(format, a...), strings.Fields(fs.cmd)[0])
}

// writeHelp prints the manual: synopsis, description, flags with their
// --spellings, examples, exit statuses and environment.
func (fs *flagSet) writeHelp(w io.Writer) {
	m := manuals[strings.Fields(fs.cmd)[0]]
	fmt.Fprintf(w, "Usage: %s\n\n%s\n\nFlags:\n", m.usage, strings.TrimSpace(m.about))
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n      %s", line, strings.ReplaceAll(usage, "\n", "\n      "))
		if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "[]" && !strings.Contains(usage, "(default") {
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintf(w, "\nExamples:\n%s\n\nExit status:\n%s\nEnvironment:\n%s", m.examples, m.exit, m.env)
}
