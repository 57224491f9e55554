package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/version"
	"github.com/patchproof/patchproof/pipeline/results"
)

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		var stdout, stderr bytes.Buffer
		err := patchproof(context.Background(), &stdout, &stderr, []string{arg})
		if code := exitCode(&stderr, err); code != 0 || stderr.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q", arg, code, stderr.String())
		}
		if want := "patchproof " + version.String() + "\n"; stdout.String() != want || version.String() == "" {
			t.Errorf("%s: %q, want %q", arg, stdout.String(), want)
		}
	}
}

// subcommands are every command with a manual, as they are typed.
var subcommands = []string{"run", "codediff", "report", "doctor", "plan", "cache", "cache prune"}

// someFlags are flags each command's --help must list, as they are typed.
var someFlags = map[string][]string{
	"run":         {"--pr N", "--stages STAGES", "--bench string", "--threads LIST", "--post", "--github-api URL"},
	"codediff":    {"--json", "--objects string"},
	"report":      {"--merge FILE", "--post", "--dry-run", "--expect-head COMMIT"},
	"doctor":      {"--builder string", "--stages STAGES", "--cache DIR", "--json"},
	"plan":        {"--event FILE", "--answer", "--run-id ID", "--github-login LOGIN"},
	"cache":       {"--cache DIR", "--cache-max SIZE"},
	"cache prune": {"--dry-run", "--cache-max SIZE"},
}

// Every subcommand's --help is its manual on stdout: a description, each
// flag as --NAME, examples, exit statuses and environment variables.
func TestEveryHelp(t *testing.T) {
	for _, cmd := range subcommands {
		for _, h := range []string{"--help", "-h"} {
			t.Run(cmd+" "+h, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				err := patchproof(context.Background(), &stdout, &stderr, append(strings.Fields(cmd), h))
				if code := exitCode(&stderr, err); code != 0 || stderr.Len() != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr.String())
				}
				out := stdout.String()
				m := manuals[strings.Fields(cmd)[0]]
				if !strings.HasPrefix(out, "Usage: "+m.usage+"\n\n") || m.about == "" {
					t.Errorf("does not begin with the synopsis and a description:\n%.300s", out)
				}
				for _, section := range []string{"\nFlags:\n", "\nExamples:\n  ", "\nExit status:\n  0 ", "\nEnvironment:\n  "} {
					if !strings.Contains(out, section) {
						t.Errorf("lacks %q:\n%s", section, out)
					}
				}
				if regexp.MustCompile(`(?m)^  -[a-z]`).MatchString(out) {
					t.Errorf("a flag is spelled with one dash:\n%s", out)
				}
				for _, f := range someFlags[cmd] {
					if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(f) + `( |$)`).MatchString(out) {
						t.Errorf("%s is not listed:\n%s", f, out)
					}
				}
			})
		}
	}
	// The laptop recipe is in run's examples.
	if !strings.Contains(manuals["run"].examples, "--repo ~/src/php-src --base PHP-8.4 --head my-branch --stages checkout,build,codediff,tests") {
		t.Error("run's examples lack the laptop recipe")
	}
}

// A flag error is one line that names it and points at --help, exit 2,
// and nothing on stdout.
func TestFlagErrorOneLine(t *testing.T) {
	for _, cmd := range subcommands {
		t.Run(cmd, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := patchproof(context.Background(), &stdout, &stderr, append(strings.Fields(cmd), "--no-such-flag"))
			code := exitCode(&stderr, err)
			want := "patchproof: " + cmd + ": flag provided but not defined: --no-such-flag (see patchproof " + strings.Fields(cmd)[0] + " --help)\n"
			if code != 2 || stderr.String() != want || stdout.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2, %q, nothing", code, stderr.String(), stdout.String(), want)
			}
		})
	}
	// Each of the flag package's errors, with the flag spelled as the
	// manual spells it.
	for args, want := range map[string]string{
		"run --passes":       "patchproof: run: flag needs an argument: --passes (see patchproof run --help)\n",
		"run --passes=lots":  "patchproof: run: invalid value \"lots\" for flag --passes: parse error (see patchproof run --help)\n",
		"doctor --json=nope": "patchproof: doctor: invalid boolean value \"nope\" for --json: parse error (see patchproof doctor --help)\n",
	} {
		var stdout, stderr bytes.Buffer
		err := patchproof(context.Background(), &stdout, &stderr, strings.Fields(args))
		if code := exitCode(&stderr, err); code != 2 || stderr.String() != want {
			t.Errorf("%s: exit %d, stderr %q; want 2, %q", args, code, stderr.String(), want)
		}
	}
	var stdout, stderr bytes.Buffer
	err := patchproof(context.Background(), &stdout, &stderr, []string{"frobnicate"})
	if code := exitCode(&stderr, err); code != 2 || stderr.String() != "patchproof: unknown command \"frobnicate\" (see patchproof --help)\n" {
		t.Errorf("unknown command: exit %d, stderr %q", code, stderr.String())
	}
}

// TestExitCodeQuotesNoCommand: an error whose text quotes the tree under
// test (a check's reason, a build's failure) is one line after
// "patchproof: ", which starts no workflow command and holds no ANSI
// escape, however the text breaks its lines.
func TestExitCodeQuotesNoCommand(t *testing.T) {
	hostile := "a build failed: x\r::warning::y\n::add-mask::z \x1b[31m"
	for _, err := range []error{results.CheckFailed("%s", hostile), errors.New(hostile), usageErrorf("%s", hostile)} {
		var stderr bytes.Buffer
		exitCode(&stderr, err)
		if got := stderr.String(); strings.Count(got, "\n") != 1 || strings.ContainsAny(got, "\r\x1b") || !strings.HasPrefix(got, "patchproof: ") {
			t.Errorf("%T: stderr %q", err, got)
		}
	}
}

// envReadRE finds the environment variables Go code reads by name:
// os.Getenv, os.LookupEnv, and the getenv functions passed around (a
// Config's Getenv, plan's env).
var envReadRE = regexp.MustCompile(`(?:\b[gG]etenv|\bLookupEnv|\benv)\("([A-Z][A-Z0-9_]*)"\)`)

// ownVarRE finds patchproof's own variables named anywhere in the code.
var ownVarRE = regexp.MustCompile(`"(PATCHPROOF_[A-Z0-9_]+)"`)

// Every environment variable the code reads is in the README's list, and
// so are those read through a list or a library: the tokens, DOCKER_HOST.
func TestREADMEListsEveryEnvironmentVariable(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Environment variables\n")
	if !ok {
		t.Fatal("README.md has no section \"Environment variables\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_]*)`").FindAllStringSubmatch(section, -1) {
		listed[m[1]] = true
	}
	read := map[string][]string{"GITHUB_TOKEN": {"pipeline/github"}, "GH_TOKEN": {"pipeline/github"}, "DOCKER_HOST": {"internal/docker"}}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "tools" || strings.HasPrefix(d.Name(), ".")) && path != root:
			return filepath.SkipDir
		case d.IsDir(), !strings.HasSuffix(path, ".go"), strings.HasSuffix(path, "_test.go"):
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range envReadRE.FindAllStringSubmatch(string(src), -1) {
			read[m[1]] = append(read[m[1]], path)
		}
		// Our own variables, also where a constant names them for a
		// child or a re-executed image (childenv.OwnerVar, secretenv.FDVar).
		for _, m := range ownVarRE.FindAllStringSubmatch(string(src), -1) {
			read[m[1]] = append(read[m[1]], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(read) < 10 {
		t.Fatalf("found only %d variables read: the search is broken", len(read))
	}
	for name, where := range read {
		if !listed[name] {
			t.Errorf("%s (read in %s) is not in the README's list", name, strings.Join(slices.Compact(where), ", "))
		}
	}
}

// The top-level help, however asked for, lists every command's synopsis
// as its manual states it, on stdout, and exits 0.
func TestTopLevelHelp(t *testing.T) {
	for _, arg := range []string{"help", "--help", "-h"} {
		var stdout, stderr bytes.Buffer
		err := patchproof(context.Background(), &stdout, &stderr, []string{arg})
		if code := exitCode(&stderr, err); code != 0 || stderr.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q", arg, code, stderr.String())
		}
		for _, c := range commands {
			if !strings.Contains(stdout.String(), "\n  "+manuals[c].usage+"\n") {
				t.Errorf("%s does not list %s's synopsis %q:\n%s", arg, c, manuals[c].usage, stdout.String())
			}
		}
	}
	if len(commands) != len(manuals) {
		t.Errorf("the usage lists %d commands, %d have a manual", len(commands), len(manuals))
	}
}
