// Package secretenv owns the secrets in patchproof's own environment: the
// GitHub token it posts with, and whatever else a CI job put there (the
// runtime's tokens, a passphrase, a proxy's password).
//
// The code under test runs as the same user as patchproof, and such a
// process may read /proc/PID/environ and /proc/PID/mem of patchproof. What
// the kernel shows as environ is the block of strings execve put on the
// stack: os.Unsetenv changes the Go runtime's copy, never that block. So
// Hold, called first in main, takes the secrets out: it writes them into a
// memory file (memfd) and executes patchproof again, the same PID and
// arguments, with the environment less the secrets and the file inherited;
// the new image reads them back and closes it. It also makes the process not dumpable, which leaves
// its /proc files (environ, mem, fd) to root alone: the rest of a run's
// memory, the token included once it is read, is out of the PR's reach
// too. A child's dumpable flag is set anew by its own execve: the
// processes patchproof starts are not affected.
//
// The GitHub token (GITHUB_TOKEN, GH_TOKEN) is then known to Getenv only,
// not to os.Getenv nor os.Environ, so that nothing can hand it on by
// accident. The other secrets go back into the Go runtime's environment,
// which the kernel does not show, for the libraries that read it there
// (net/http's proxy, the SSH agent's socket); children get none of them
// (internal/childenv allows none).
package secretenv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/patchproof/patchproof/internal/childenv"
)

// held are the secrets patchproof reads itself, answered by Getenv alone.
var held = []string{"GITHUB_TOKEN", "GH_TOKEN"}

// FDVar names, in the environment of the image Hold executes, the file
// descriptor the secrets come on. It is not a secret: a number.
const FDVar = "PATCHPROOF_SECRETS_FD"

// memfdName is the name of the memory file the secrets come in, which the
// new image checks before it reads.
const memfdName = "patchproof-secrets"

// maxSecrets bounds what the new image reads.
const maxSecrets = 1 << 20

var (
	mu      sync.RWMutex
	secrets map[string]string // the held variables, once Hold took them
)

// Getenv is os.Getenv, except for the GitHub token once Hold took it out
// of the environment: GITHUB_TOKEN and GH_TOKEN are answered from what it
// holds.
func Getenv(name string) string {
	mu.RLock()
	v, ok := secrets[name]
	mu.RUnlock()
	if ok {
		return v
	}
	return os.Getenv(name)
}

// Hold makes the process not dumpable and, when its initial environment
// holds a secret (see Secret), executes it again without them; it returns
// in the new image, with the secrets held. Call it first in main, before
// any other goroutine of the program's starts: on success the process
// image is replaced. When the exec fails the secrets are held all the
// same, in this image, and the error says that the kernel's copy of the
// environment keeps them (readable by root alone: the process is not
// dumpable).
func Hold() error {
	// First, so that the window in which the environment is readable is
	// the runtime's start, no more. An exec sets the flag anew: the new
	// image sets it again.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("hold secrets: make the process not dumpable: %w", err)
	}
	keep, carry := split(os.Environ())
	if fd, ok := os.LookupEnv(FDVar); ok {
		// The new image, or one started with FDVar by someone else: the
		// latter's secrets are held as they are, not executed again.
		os.Unsetenv(FDVar)
		err := receive(fd)
		if err != nil {
			store(carry)
		}
		return err
	}
	if len(carry) == 0 {
		return nil
	}
	err := reexec(keep, carry)
	store(carry)
	return fmt.Errorf("hold secrets: %w: the process's initial environment keeps them, readable by root alone", err)
}

// split divides environ into what is no secret and what is.
func split(environ []string) (keep, carry []string) {
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if isHeld(name) || Secret(name, value) {
			carry = append(carry, kv)
		} else {
			keep = append(keep, kv)
		}
	}
	return keep, carry
}

// reexec executes this program again with environ keep, and carry in a
// memory file. It returns only when it could not.
func reexec(keep, carry []string) error {
	payload := strings.Join(carry, "\x00")
	if len(payload) > maxSecrets {
		return fmt.Errorf("%d bytes of secrets, more than %d", len(payload), maxSecrets)
	}
	fd, err := unix.MemfdCreate(memfdName, unix.MFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), memfdName)
	defer f.Close() // only reached when the exec failed
	if _, err := f.WriteString(payload); err != nil {
		return fmt.Errorf("write the secrets: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("write the secrets: %w", err)
	}
	// The file alone of this image's survives the exec.
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
		return fmt.Errorf("pass the secrets on: %w", err)
	}
	env := append(keep, FDVar+"="+strconv.Itoa(fd))
	return fmt.Errorf("execute patchproof again: %w", syscall.Exec("/proc/self/exe", os.Args, env))
}

// receive reads the secrets from the memory file the previous image
// passed as fd, and closes it.
func receive(fd string) error {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 0 {
		return fmt.Errorf("hold secrets: %s=%q is not a file descriptor", FDVar, fd)
	}
	if l, err := os.Readlink("/proc/self/fd/" + fd); err != nil || !strings.HasPrefix(l, "/memfd:"+memfdName+" ") {
		return fmt.Errorf("hold secrets: %s=%d is not the file patchproof passes itself", FDVar, n)
	}
	f := os.NewFile(uintptr(n), memfdName)
	data, err := io.ReadAll(io.LimitReader(f, maxSecrets+1))
	f.Close()
	switch {
	case err != nil:
		return fmt.Errorf("hold secrets: read them: %w", err)
	case len(data) > maxSecrets:
		return errors.New("hold secrets: the file holds more than the secrets")
	case len(data) > 0:
		store(strings.Split(string(data), "\x00"))
	}
	return nil
}

// store holds the GitHub token of carry ("NAME=value" entries) for Getenv
// and out of the Go runtime's environment, and puts the other secrets
// (back) into the latter.
func store(carry []string) {
	mu.Lock()
	defer mu.Unlock()
	if secrets == nil {
		secrets = map[string]string{}
	}
	for _, kv := range carry {
		name, value, _ := strings.Cut(kv, "=")
		if isHeld(name) {
			secrets[name] = value
			os.Unsetenv(name)
		} else {
			os.Setenv(name, value)
		}
	}
	for _, name := range held {
		if _, ok := secrets[name]; !ok {
			secrets[name] = ""
		}
	}
}

func isHeld(name string) bool {
	for _, h := range held {
		if name == h {
			return true
		}
	}
	return false
}

// secretParts are the words, between underscores, that make a variable's
// name a secret's.
var secretParts = map[string]bool{
	"TOKEN": true, "SECRET": true, "SECRETS": true, "PASSWORD": true, "PASSWD": true, "PASSPHRASE": true,
	"PASS": true, "PWD": true, "CREDENTIAL": true, "CREDENTIALS": true, "KEY": true, "KEYS": true,
	"APIKEY": true, "JWT": true, "PRIVATE": true, "COOKIE": true,
}

// secretWords make a name a secret's anywhere in it (NPM_TOKEN, MYAPIKEY).
var secretWords = []string{"TOKEN", "SECRET", "PASSW", "PASSPHRASE", "CREDENTIAL", "APIKEY", "JWT"}

// Secret reports whether a variable of patchproof's environment is a
// secret to take out of what the kernel shows: its name has a word of
// secretParts (but the working directory, PWD and OLDPWD, is none), a
// word of secretWords anywhere, or ends in _AUTH (NPM_AUTH; not
// SSH_AUTH_SOCK, a socket's path), or its value holds a URL with
// credentials (a proxy's, a database's). It is a guess, unlike the allow
// list children get: what it misses stays readable by root alone.
func Secret(name, value string) bool {
	upper := strings.ToUpper(name)
	if upper == "PWD" || upper == "OLDPWD" {
		return false
	}
	parts := strings.Split(upper, "_")
	for _, p := range parts {
		if secretParts[p] {
			return true
		}
	}
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return parts[len(parts)-1] == "AUTH" || childenv.HasCredentials(value)
}
