package secretenv

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// roleVar makes this test binary a patchproof stand-in ("holder"), which
// calls Hold as main does, or a process of the same user that reads
// another's /proc files ("reader").
const roleVar = "HOLD_TEST_ROLE" // no secret by its name, so that it stays where TestMain reads it

func TestMain(m *testing.M) {
	switch os.Getenv(roleVar) {
	case "holder":
		holder()
	case "reader":
		reader(os.Args[len(os.Args)-1])
	default:
		os.Exit(m.Run())
	}
}

// heldReport is what the holder says of itself once Hold has returned.
type heldReport struct {
	PID      int
	Err      string
	Dumpable int
	Environ  string            // its own /proc/self/environ: the kernel's copy
	Getenv   map[string]string // Getenv of each secret
	OS       map[string]string // os.Getenv of each secret
	FDs      []string          // where its file descriptors lead
}

// holder holds its secrets, reports on one line, and waits for its stdin
// to close.
func holder() {
	err := Hold()
	r := heldReport{PID: os.Getpid(), Getenv: map[string]string{}, OS: map[string]string{}}
	if err != nil {
		r.Err = err.Error()
	}
	r.Dumpable, _ = unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	env, _ := os.ReadFile("/proc/self/environ")
	r.Environ = string(env)
	for name := range testSecrets {
		r.Getenv[name], r.OS[name] = Getenv(name), os.Getenv(name)
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		l, _ := os.Readlink("/proc/self/fd/" + fd.Name())
		r.FDs = append(r.FDs, l)
	}
	json.NewEncoder(os.Stdout).Encode(r)
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// readReport is what the reader could read of another process.
type readReport struct {
	Environ, EnvironErr, Cmdline, CmdlineErr, MemErr string
}

func reader(pid string) {
	var r readReport
	b, err := os.ReadFile("/proc/" + pid + "/environ")
	r.Environ, r.EnvironErr = string(b), errString(err)
	b, err = os.ReadFile("/proc/" + pid + "/cmdline")
	r.Cmdline, r.CmdlineErr = string(b), errString(err)
	f, err := os.Open("/proc/" + pid + "/mem")
	if err == nil {
		f.Close()
	}
	r.MemErr = errString(err)
	json.NewEncoder(os.Stdout).Encode(r)
	os.Exit(0)
}

func errString(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

// testSecrets are set in the holder's environment at its start.
var testSecrets = map[string]string{
	"GITHUB_TOKEN":          "ghp_HolderMustHideThis00000000000000001",
	"GH_TOKEN":              "gho_HolderMustHideThis00000000000000002",
	"ACTIONS_RUNTIME_TOKEN": "eyJHolderMustHideThis00000000000000003",
	"GPG_PASSPHRASE":        "HolderMustHideThis00000000000000004",
	"HTTPS_PROXY":           "http://proxyuser:HolderMustHideThis00000000000000005@proxy.invalid:3128",
}

const hidden = "HolderMustHideThis"

// startHolder starts the holder as cred (nil: this process's user) and
// returns it with its report; it is stopped when the test ends.
func startHolder(t *testing.T, bin string, cred *syscall.Credential) (*exec.Cmd, heldReport) {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = []string{"PATH=/usr/bin:/bin", roleVar + "=holder", "KEPT=visible"}
	for k, v := range testSecrets {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
	}()
	var r heldReport
	select {
	case s := <-line:
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			t.Fatalf("holder's report %q: %v", s, err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the holder did not report")
	}
	return cmd, r
}

// read runs the reader as cred on pid.
func read(t *testing.T, bin string, cred *syscall.Credential, pid int) readReport {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^$", strconv.Itoa(pid))
	cmd.Env = []string{"PATH=/usr/bin:/bin", roleVar + "=reader"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reader: %v", err)
	}
	var r readReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("reader's report %q: %v", out, err)
	}
	return r
}

// After Hold, the environment the kernel shows holds none of the secrets
// (but the rest), the process keeps its PID, the token is known to Getenv
// alone, the other secrets to the Go runtime, the memory file they came in
// is closed, and the process is not dumpable.
func TestHoldTakesTheSecretsOutOfTheEnviron(t *testing.T) {
	cmd, r := startHolder(t, os.Args[0], nil)
	if r.Err != "" {
		t.Fatalf("Hold: %s", r.Err)
	}
	if r.PID != cmd.Process.Pid {
		t.Errorf("the holder is PID %d, started as %d: the exec must keep the PID", r.PID, cmd.Process.Pid)
	}
	if strings.Contains(r.Environ, hidden) || strings.Contains(r.Environ, "TOKEN=") {
		t.Errorf("the kernel's environ holds a secret: %q", r.Environ)
	}
	if !strings.Contains(r.Environ, "KEPT=visible\x00") {
		t.Errorf("the kernel's environ lost what is no secret: %q", r.Environ)
	}
	for name, value := range testSecrets {
		if isHeld(name) {
			if r.Getenv[name] != value || r.OS[name] != "" {
				t.Errorf("%s: Getenv %q, os.Getenv %q; want the token, and nothing", name, r.Getenv[name], r.OS[name])
			}
		} else if r.OS[name] != value {
			t.Errorf("%s: os.Getenv %q, want it back in the runtime's environment", name, r.OS[name])
		}
	}
	for _, fd := range r.FDs {
		if strings.Contains(fd, memfdName) {
			t.Errorf("the secrets' memory file is still open: %s", fd)
		}
	}
	if r.Dumpable != 0 {
		t.Errorf("dumpable %d, want 0", r.Dumpable)
	}
}

// Another process of the same user cannot read the holder's environ nor
// its memory; its command line it can, and it holds no secret. A process
// of that user that did not call Hold is readable by the same reader: the
// refusal is Hold's doing. As root (which may read any process), both run
// as the user nobody, from a copy of this binary that user can execute.
func TestHoldersProcFilesAreClosedToTheUser(t *testing.T) {
	bin, cred := os.Args[0], (*syscall.Credential)(nil)
	if os.Getuid() == 0 {
		bin, cred = copyForNobody(t), &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	cmd, r := startHolder(t, bin, cred)
	if r.Err != "" {
		t.Fatalf("Hold: %s", r.Err)
	}
	got := read(t, bin, cred, cmd.Process.Pid)
	if got.EnvironErr != "permission denied" || got.Environ != "" {
		t.Errorf("environ: read %q, error %q; want permission denied", got.Environ, got.EnvironErr)
	}
	if got.MemErr != "permission denied" {
		t.Errorf("mem: error %q, want permission denied", got.MemErr)
	}
	if got.CmdlineErr != "" || !strings.Contains(got.Cmdline, "-test.run") || strings.Contains(got.Cmdline, hidden) {
		t.Errorf("cmdline: %q, error %q; want it readable, without a secret", got.Cmdline, got.CmdlineErr)
	}

	// The control: the same user's process that holds nothing is read.
	sleeper := exec.Command("sleep", "60")
	sleeper.Env = []string{"PATH=/usr/bin:/bin", "CONTROL=" + hidden}
	sleeper.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := sleeper.Start(); err != nil {
		t.Skipf("no sleep to compare with: %v", err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	if c := read(t, bin, cred, sleeper.Process.Pid); !strings.Contains(c.Environ, "CONTROL="+hidden) {
		t.Errorf("the reader cannot read its own user's plain process either (%q, %q): the test proves nothing", c.Environ, c.EnvironErr)
	}
}

// copyForNobody copies this test binary where the user nobody can execute
// it.
func copyForNobody(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "secretenv.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestSecret(t *testing.T) {
	tests := []struct {
		name, value string
		want        bool
	}{
		{"GITHUB_TOKEN", "x", true},
		{"ACTIONS_RUNTIME_TOKEN", "x", true},
		{"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "x", true},
		{"GPG_PASSPHRASE", "x", true},
		{"MYSQL_PWD", "x", true},
		{"DEPLOY_APIKEY", "x", true},
		{"SIGNING_KEYS", "x", true},
		{"NPM_AUTH", "x", true},
		{"CI_JOB_JWT", "x", true},
		{"AWS_SECRET_ACCESS_KEY", "x", true},
		{"DB_PASS", "x", true},
		{"DATABASE_URL", "mysql://app:pw@db/app", true},
		{"HTTPS_PROXY", "http://u:pw@proxy:3128", true},
		{"HTTPS_PROXY", "http://proxy:3128", false},
		{"PWD", "/home/runner/work", false},
		{"OLDPWD", "/", false},
		{"SSH_AUTH_SOCK", "/tmp/agent", false},
		{"MONKEY", "banana", false},
		{"KEYBOARD", "us", false},
		{"GITHUB_STEP_SUMMARY", "/s", false},
		{"PATCHPROOF_GITHUB_API", "https://api.github.com/", false},
		{"DOCKER_HOST", "unix:///var/run/docker.sock", false},
		{"RUNNER_TRACKING_ID", "github_1", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s=%s", tt.name, tt.value), func(t *testing.T) {
			if got := Secret(tt.name, tt.value); got != tt.want {
				t.Errorf("Secret(%q, %q) = %v, want %v", tt.name, tt.value, got, tt.want)
			}
		})
	}
}

// Without Hold, Getenv is os.Getenv.
func TestGetenvWithoutHold(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_fromTheEnvironment")
	if got := Getenv("GITHUB_TOKEN"); got != "ghp_fromTheEnvironment" {
		t.Errorf("Getenv = %q", got)
	}
}

// What came on the memory file is put where it belongs: the token held,
// out of the Go runtime's environment, the other secrets back into it.
func TestStore(t *testing.T) {
	t.Cleanup(func() {
		mu.Lock()
		secrets = nil
		mu.Unlock()
	})
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_TOKEN", "")
	t.Setenv("GPG_PASSPHRASE", "")
	store([]string{"GITHUB_TOKEN=ghp_held", "GPG_PASSPHRASE=correct horse"})
	if _, ok := os.LookupEnv("GITHUB_TOKEN"); ok || Getenv("GITHUB_TOKEN") != "ghp_held" {
		t.Errorf("GITHUB_TOKEN: in the environment %v, Getenv %q; want held alone", ok, Getenv("GITHUB_TOKEN"))
	}
	// GH_TOKEN did not come: Getenv does not fall back to an environment
	// someone set after Hold.
	os.Setenv("GH_TOKEN", "gho_later")
	if got := Getenv("GH_TOKEN"); got != "" {
		t.Errorf("GH_TOKEN: Getenv %q, want none", got)
	}
	if got := os.Getenv("GPG_PASSPHRASE"); got != "correct horse" {
		t.Errorf("GPG_PASSPHRASE: os.Getenv %q, want it back", got)
	}
}

// The file descriptor named is read only if it is the memory file Hold
// writes: not one patchproof was started with by someone else.
func TestReceiveRefusesOtherFiles(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, fd := range []string{"x", "-1", "99999", strconv.Itoa(int(r.Fd()))} {
		t.Run(fd, func(t *testing.T) {
			if err := receive(fd); err == nil || !strings.Contains(err.Error(), FDVar) {
				t.Errorf("receive(%s) = %v, want an error naming %s", fd, err, FDVar)
			}
		})
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Errorf("receive closed a file that was not its own: %v", err)
	}
}
