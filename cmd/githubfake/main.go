// Command githubfake serves a local fake of the GitHub REST endpoints that
// patchproof uses (the user, a pull request, its comments, commit statuses,
// permissions, commits, branches), so that a whole `patchproof run --post` can be
// tried, and tested, offline:
//
//	githubfake -pr php/php-src#4242 -token T -url-file url.txt &
//	GITHUB_TOKEN=T patchproof run --post --post-to php/php-src#4242 --github-api "$(cat url.txt)"
//
// With -git-repo it also serves a git repository as the PR's, over git's
// smart HTTP protocol (git http-backend) at ROOT/OWNER/REPO[.git], and
// takes the PR's base and head commits from it on every request
// (refs/heads/BASE, refs/pull/N/head): moving the ref moves the PR. With
// -demo-upstream that repository is first made a copy of the demo's
// upstream (pipeline/demo), which scripts/rehearse validates:
//
//	githubfake -pr php/php-src#24448 -git-repo up.git -demo-upstream -token T -url-file url.txt &
//	patchproof run --repo "$(sed 's,/api/v3/$,,' url.txt)/php/php-src" --pr 24448 ...
//
// It serves until it is interrupted. Its state is what the API answers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/patchproof/patchproof/internal/aptsource"
	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/pipeline/demo"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

// options are githubfake's flags.
type options struct {
	addr, pr, base, head, token, login, urlFile string
	appToken, maintainer                        string
	gitRepo, cache                              string
	demoUpstream, recordPush                    bool
	refs                                        refFlag
	permissions                                 permissionFlag
}

func main() {
	var o options
	flag.StringVar(&o.addr, "addr", "127.0.0.1:0", "listen on `ADDR`")
	flag.StringVar(&o.pr, "pr", "php/php-src#4242", "serve this pull request (`OWNER/REPO#N`)")
	flag.StringVar(&o.base, "base", "master", "the PR's base branch")
	flag.StringVar(&o.head, "head-sha", "", "the PR's head commit (default: refs/pull/N/head of -git-repo, else aaa...a)")
	flag.StringVar(&o.token, "token", "", "the token of the user patchproof posts as (required)")
	flag.StringVar(&o.login, "login", "patchproof-bot", "that user's login")
	flag.StringVar(&o.appToken, "app-token", "", "an installation `TOKEN` acting as github-actions[bot], as the plan job's")
	flag.StringVar(&o.maintainer, "maintainer", "", "give `LOGIN` the maintain role on the PR's repository (who may trigger a run)")
	flag.Var(&o.permissions, "permission", "give `LOGIN=ROLE` the role on the PR's repository (admin, maintain, write, triage, read, none; repeatable): the collaborator permission endpoint's answer; a user given none reads")
	flag.Var(&o.refs, "ref", "make `OWNER/REPO@REF=SHA` resolve (repeatable), e.g. patchproof's own commit for the plan")
	flag.StringVar(&o.gitRepo, "git-repo", "", "serve the bare repository `DIR` as the PR's repository over git's smart HTTP")
	flag.BoolVar(&o.demoUpstream, "demo-upstream", false, "make -git-repo a copy of the demo's upstream first, unless it exists")
	flag.StringVar(&o.cache, "cache", "", "the patchproof cache `DIR` the demo's upstream is in (default $PATCHPROOF_CACHE, else ~/.cache/patchproof)")
	flag.BoolVar(&o.recordPush, "record-push", false, "record a push of the PR's head commit to its head branch a minute before the start, so that a trigger comment need not name the commit")
	flag.StringVar(&o.urlFile, "url-file", "", "write the API root URL to `FILE` once listening")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, os.Stderr, o); err != nil {
		fmt.Fprintf(os.Stderr, "githubfake: %v\n", err)
		os.Exit(2)
	}
}

func serve(ctx context.Context, log io.Writer, o options) error {
	if o.token == "" {
		return errors.New("-token is required")
	}
	to, err := github.ParsePullRequest(o.pr)
	if err != nil {
		return fmt.Errorf("-pr %s: %w", o.pr, err)
	}
	if o.demoUpstream {
		if o.gitRepo == "" {
			return errors.New("-demo-upstream needs -git-repo")
		}
		if err := copyUpstream(ctx, log, o.cache, o.gitRepo); err != nil {
			return err
		}
	}
	if o.gitRepo != "" {
		if _, err := exec.LookPath("git"); err != nil {
			return fmt.Errorf("-git-repo: git http-backend serves it: %w", err)
		}
		if _, err := os.Stat(o.gitRepo); err != nil {
			return fmt.Errorf("-git-repo: %w", err)
		}
	}
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	f := githubfake.Serve(l)
	defer f.Close()
	f.AddUser(o.login, o.token)
	if o.appToken != "" {
		f.AddAppToken("github-actions[bot]", o.appToken)
	}
	pr := githubfake.PR{Owner: to.Repo.Owner, Repo: to.Repo.Name, Number: to.Number,
		Base: githubfake.Branch{Ref: o.base}, Head: githubfake.Branch{Ref: "head", SHA: o.head}}
	if o.gitRepo != "" {
		f.ServeGit(to.Repo.Owner, to.Repo.Name, o.gitRepo)
	} else {
		pr.Base.SHA = strings.Repeat("b", 40)
		if pr.Head.SHA == "" {
			pr.Head.SHA = strings.Repeat("a", 40)
		}
	}
	f.AddPR(pr)
	if o.recordPush {
		sha := pr.Head.SHA
		if sha == "" {
			if sha, err = gitHead(ctx, o.gitRepo, to.Number); err != nil {
				return fmt.Errorf("-record-push: %w", err)
			}
		}
		f.AddActivity(to.Repo.Owner, to.Repo.Name, githubfake.Activity{Ref: pr.Head.Ref, After: sha, Actor: "contributor", Time: time.Now().Add(-time.Minute)})
	}
	if o.maintainer != "" {
		f.SetPermission(to.Repo.Owner, to.Repo.Name, o.maintainer, "maintain")
	}
	for _, p := range o.permissions {
		f.SetPermission(to.Repo.Owner, to.Repo.Name, p.login, p.role)
	}
	for _, r := range o.refs {
		f.AddRef(r.owner, r.repo, r.ref, r.sha)
	}
	if o.urlFile != "" {
		if err := os.WriteFile(o.urlFile, []byte(f.URL()+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(log, "githubfake: serving %s at %s\n", to, f.URL())
	<-ctx.Done()
	return nil
}

// copyUpstream makes dst a copy of the demo's upstream, which stays as it
// is in the cache: whoever moves the PR's head moves it in dst. A dst that
// exists is kept, so that a restarted fake serves the same repository.
func copyUpstream(ctx context.Context, log io.Writer, cache, dst string) error {
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	if cache == "" {
		var err error
		if cache, err = cachedir.Default(os.Getenv); err != nil {
			return err
		}
	}
	mirror := os.Getenv("PATCHPROOF_DEBIAN_MIRROR")
	if mirror == "" {
		// Only needed when the demo's tarball is not in the cache yet.
		mirror, _ = aptsource.Default.Mirror()
	}
	src, err := demo.EnsureUpstream(ctx, demo.Options{CacheDir: cache, Mirror: mirror, Log: log})
	if err != nil {
		return fmt.Errorf("-demo-upstream: %w", err)
	}
	// A local clone hard-links the pack: the copy costs no disk.
	cmd := exec.CommandContext(ctx, "git", "clone", "--mirror", "--quiet", src, dst)
	cmd.Env = append(childenv.For(childenv.Tool), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("-demo-upstream: copy %s to %s: %w: %s", src, dst, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// gitHead is the PR's head commit in the served repository: its
// refs/pull/N/head.
func gitHead(ctx context.Context, repo string, number int) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "--verify", fmt.Sprintf("refs/pull/%d/head^{commit}", number))
	cmd.Env = append(childenv.For(childenv.Tool), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("read refs/pull/%d/head of %s: %w", number, repo, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// permissionFlag collects -permission LOGIN=ROLE.
type permissionFlag []struct{ login, role string }

func (p *permissionFlag) String() string { return "" }

func (p *permissionFlag) Set(s string) error {
	login, role, ok := strings.Cut(s, "=")
	switch role {
	case "admin", "maintain", "write", "triage", "read", "none":
	default:
		ok = false
	}
	if !ok || login == "" {
		return fmt.Errorf("want LOGIN=ROLE (admin, maintain, write, triage, read or none), got %q", s)
	}
	*p = append(*p, struct{ login, role string }{login, role})
	return nil
}

// refFlag collects -ref OWNER/REPO@REF=SHA.
type refFlag []struct{ owner, repo, ref, sha string }

func (r *refFlag) String() string { return "" }

func (r *refFlag) Set(s string) error {
	where, sha, ok := strings.Cut(s, "=")
	repo, ref, ok2 := strings.Cut(where, "@")
	owner, name, ok3 := strings.Cut(repo, "/")
	if !ok || !ok2 || !ok3 || owner == "" || name == "" || ref == "" || len(sha) != 40 {
		return fmt.Errorf("want OWNER/REPO@REF=SHA (40 hex digits), got %q", s)
	}
	*r = append(*r, struct{ owner, repo, ref, sha string }{owner, name, ref, sha})
	return nil
}
