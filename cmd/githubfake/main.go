// Command githubfake serves a local fake of the GitHub REST endpoints that
// patchproof uses (the user, a pull request, its comments, commit statuses),
// so that a whole `patchproof run --post` can be tried, and tested, offline:
//
//	githubfake -pr php/php-src#4242 -token T -url-file url.txt &
//	GITHUB_TOKEN=T patchproof run --post --post-to php/php-src#4242 --github-api "$(cat url.txt)"
//
// It serves until it is interrupted. Its state is what the API answers.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen on `ADDR`")
	pr := flag.String("pr", "php/php-src#4242", "serve this pull request (`OWNER/REPO#N`)")
	base := flag.String("base", "master", "the PR's base branch")
	head := flag.String("head-sha", strings.Repeat("a", 40), "the PR's head commit")
	token := flag.String("token", "", "the token of the user patchproof posts as (required)")
	login := flag.String("login", "patchproof-bot", "that user's login")
	urlFile := flag.String("url-file", "", "write the API root URL to `FILE` once listening")
	flag.Parse()
	if err := serve(*addr, *pr, *base, *head, *token, *login, *urlFile); err != nil {
		fmt.Fprintf(os.Stderr, "githubfake: %v\n", err)
		os.Exit(2)
	}
}

func serve(addr, pr, base, head, token, login, urlFile string) error {
	if token == "" {
		return fmt.Errorf("-token is required")
	}
	to, err := github.ParsePullRequest(pr)
	if err != nil {
		return fmt.Errorf("-pr %s: %w", pr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	f := githubfake.Serve(l)
	defer f.Close()
	f.AddUser(login, token)
	f.AddPR(githubfake.PR{Owner: to.Repo.Owner, Repo: to.Repo.Name, Number: to.Number,
		Base: githubfake.Branch{Ref: base, SHA: strings.Repeat("b", 40)},
		Head: githubfake.Branch{Ref: "head", SHA: head}})
	if urlFile != "" {
		if err := os.WriteFile(urlFile, []byte(f.URL()+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "githubfake: serving %s at %s\n", to, f.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	return nil
}
