package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/workloads/mysqld"
)

// A Need is a host tool a stage needs, as the stage declares it (Stage's
// Needs): what doctor checks.
type Need struct {
	Tool     string // a program looked up in PATH; "" for nothing to install
	Package  string // the Debian package that has it
	Why      string
	Optional bool
	// Builder, when set, is the one --builder whose runs need it:
	// KindHost for what the images have in containers (the compilers,
	// Apache, MariaDB), KindDocker for what only containers need.
	Builder builders.ExecutorKind
}

// Requirement is a stage's Need on this host, and whether it is there.
type Requirement struct {
	Stage    string `json:"stage"`
	Tool     string `json:"tool"`    // a program looked up in PATH
	Package  string `json:"package"` // the Debian package that has it
	Why      string `json:"why"`
	Optional bool   `json:"optional,omitempty"`
	Found    string `json:"found,omitempty"` // its path, when found
}

// Requirements lists what each stage needs on this host for a builder, in
// the stages' order, from what each stage declares.
func Requirements(builder builders.ExecutorKind) []Requirement {
	cfg := &Config{Builder: builder}
	cfg.setDefaults()
	var reqs []Requirement
	for _, s := range stages {
		for _, n := range s.Needs(cfg) {
			r := Requirement{Stage: s.String(), Tool: n.Tool, Package: n.Package, Why: n.Why, Optional: n.Optional}
			if r.Tool != "" {
				if p, err := exec.LookPath(r.Tool); err == nil {
					r.Found = p
				} else if p, err := exec.LookPath("/usr/sbin/" + r.Tool); err == nil {
					r.Found = p
				}
			}
			reqs = append(reqs, r)
		}
	}
	return reqs
}

// MissingPackages returns the sorted Debian packages of missing tools,
// optional ones included.
func MissingPackages(reqs []Requirement) []string {
	var pkgs []string
	for _, r := range reqs {
		if r.Tool != "" && r.Found == "" && !slices.Contains(pkgs, r.Package) {
			pkgs = append(pkgs, r.Package)
		}
	}
	sort.Strings(pkgs)
	return pkgs
}

// DockerCheck is one thing --builder docker needs of the engine and this
// machine, and whether it is there.
type DockerCheck struct {
	What   string `json:"what"`
	OK     bool   `json:"ok"`
	Status string `json:"status"`
}

// DockerChecks says whether the engine answers and is new enough, where
// the images come from and whether they are made already: what
// `doctor --builder docker` shows. An image not made yet is no fault: the
// first run makes it.
func DockerChecks(ctx context.Context, cfg *Config) []DockerCheck {
	var out []DockerCheck
	c, err := docker.Connect(ctx)
	if err != nil {
		return append(out, DockerCheck{What: "engine", Status: err.Error()})
	}
	defer c.Close()
	engine := DockerCheck{What: "engine", OK: true, Status: "answers at " + c.DaemonHost()}
	if v, err := c.ServerVersion(ctx); err == nil {
		engine.Status = fmt.Sprintf("Docker %s (Engine API %s, this client %s) at %s", v.Version, v.APIVersion, c.ClientVersion(), c.DaemonHost())
	}
	out = append(out, engine)
	r := &Run{Config: cfg}
	opt := r.imageOptions(io.Discard)
	mirror := DockerCheck{What: "Debian mirror", OK: opt.Mirror != "", Status: opt.Mirror}
	if opt.Mirror == "" {
		mirror.Status = "none in this machine's apt sources: set PATCHPROOF_DEBIAN_MIRROR (images are made from Debian's packages)"
	}
	out = append(out, mirror)
	// The serve image's tag names the build image's ID, so it has a tag
	// only once the build image is made.
	serve, serveErr := builders.ServeRecipe(ctx, c, docker.ImageTag("patchproof-build", builders.BuildRecipe, opt))
	for _, img := range []struct {
		repo   string
		recipe docker.Recipe
		why    string
	}{
		{"patchproof-build", builders.BuildRecipe, "the builds"},
		{"patchproof-serve", serve, "Apache with a build's module (race, bench)"},
		{"patchproof-mariadb", mysqld.ImageRecipe, "the database"},
	} {
		tag := docker.ImageTag(img.repo, img.recipe, opt)
		st := DockerCheck{What: "image " + img.repo, OK: true, Status: "made (" + tag + ") for " + img.why}
		if img.repo == "patchproof-serve" && serveErr != nil {
			st.Status = "not made yet: the first run builds it on the build image, once that is made, for " + img.why
		} else if _, err := c.ImageInspect(ctx, tag); err != nil {
			st.Status = "not made yet: the first run builds " + tag + " from its Dockerfile under images/ (Debian's packages), for " + img.why
		}
		out = append(out, st)
	}
	return out
}

// RequirementsOf is Requirements of the stages set selects only.
func RequirementsOf(builder builders.ExecutorKind, set StageSet) []Requirement {
	var out []Requirement
	for _, r := range Requirements(builder) {
		if set.Has(r.Stage) {
			out = append(out, r)
		}
	}
	return out
}

// HostCheck is one thing about this machine a selected stage needs beside
// its tools, and whether it is there.
type HostCheck struct {
	What     string `json:"what"`
	OK       bool   `json:"ok"`
	Optional bool   `json:"optional,omitempty"` // a run goes ahead without it, measuring less well
	Status   string `json:"status"`
}

// HostOptions say what HostChecks looks at. The zero value, with Stages
// and Cache, looks at this machine.
type HostOptions struct {
	Stages  StageSet
	Builder builders.ExecutorKind
	Cache   string // the cache directory; the nearest existing parent is measured
	// Proc and Cgroup are the roots of /proc and /sys/fs/cgroup, Euid the
	// effective user: tests point them elsewhere. Euid -1 means the
	// process's own.
	Proc, Cgroup string
	Euid         int
	// MinFree is the free disk the cache needs; 0 means DefaultMinFree.
	MinFree uint64
}

// DefaultMinFree is the free disk a run's builds need in the cache: four
// builds of about 350 MB, two TSan builds, ccache and a php-src mirror of
// about 1 GB, with room to spare.
const DefaultMinFree = 5 << 30

func (o HostOptions) withDefaults() HostOptions {
	if o.Proc == "" {
		o.Proc = "/proc"
	}
	if o.Cgroup == "" {
		o.Cgroup = "/sys/fs/cgroup"
	}
	if o.Euid < 0 {
		o.Euid = os.Geteuid()
	}
	if o.MinFree == 0 {
		o.MinFree = DefaultMinFree
	}
	return o
}

// A hostChecker is a stage that needs more of this machine than its
// tools (Needs): it says what, as checks of this machine.
type hostChecker interface {
	HostChecks(o HostOptions) []HostCheck
}

// HostChecks checks what the selected stages need of this machine beyond
// tools, as each stage of the list declares it (hostChecker), in the
// stages' order, each check once: for the checkout and the builds, free
// disk in the cache; for the benchmark, kernel.perf_event_paranoid
// (perf's profile) and cgroup v2 with a cgroup this user may divide (CPU
// time of a server's own cgroup, else /proc).
func HostChecks(o HostOptions) []HostCheck {
	o = o.withDefaults()
	var out []HostCheck
	for _, s := range stages {
		hc, ok := s.(hostChecker)
		if !ok || !o.Stages.Has(s.String()) {
			continue
		}
		for _, c := range hc.HostChecks(o) {
			if !slices.ContainsFunc(out, func(d HostCheck) bool { return d.What == c.What }) {
				out = append(out, c)
			}
		}
	}
	return out
}

// maxParanoid is the highest kernel.perf_event_paranoid at which an
// unprivileged perf may sample its own user's processes.
const maxParanoid = 2

func paranoidCheck(o HostOptions) HostCheck {
	c := HostCheck{What: "kernel.perf_event_paranoid"}
	data, err := os.ReadFile(filepath.Join(o.Proc, "sys/kernel/perf_event_paranoid"))
	if err != nil {
		c.Status = fmt.Sprintf("unreadable (%v): perf's profile may fail", err)
		return c
	}
	level, err := strconv.Atoi(strings.TrimSpace(string(data)))
	switch {
	case err != nil:
		c.Status = fmt.Sprintf("%q is not a level", strings.TrimSpace(string(data)))
	case o.Euid == 0:
		c.OK, c.Status = true, fmt.Sprintf("%d (root: any level)", level)
	case level <= maxParanoid:
		c.OK, c.Status = true, fmt.Sprintf("%d (at most %d: perf may profile this user's processes)", level, maxParanoid)
	default:
		c.Status = fmt.Sprintf("%d: perf record needs %d or less (sysctl -w kernel.perf_event_paranoid=%d), or root", level, maxParanoid, maxParanoid)
	}
	return c
}

func cgroupCheck(o HostOptions) HostCheck {
	c := HostCheck{What: "cgroup v2", Optional: true}
	controllers, err := os.ReadFile(filepath.Join(o.Cgroup, "cgroup.controllers"))
	if err != nil {
		c.Status = "not mounted at " + o.Cgroup + ": CPU time is read from /proc"
		return c
	}
	if !slices.Contains(strings.Fields(string(controllers)), "cpu") {
		c.Status = "no cpu controller: CPU time is read from /proc"
		return c
	}
	if how := placementOf(o.Builder).cpuAccounting(); how != "" {
		c.OK, c.Status = true, "unified, cpu controller: "+how
		return c
	}
	self, err := os.ReadFile(filepath.Join(o.Proc, "self/cgroup"))
	path, ok := strings.CutPrefix(strings.TrimSpace(string(self)), "0::")
	if err != nil || !ok {
		c.Status = "this process's cgroup is unknown: CPU time is read from /proc"
		return c
	}
	dir := filepath.Join(o.Cgroup, filepath.Clean("/"+path))
	if unix.Access(dir, unix.W_OK) != nil {
		c.Status = "unified, but " + dir + " is not delegated to this user (systemd-run --user --scope -p Delegate=yes): CPU time is read from /proc"
		return c
	}
	c.OK, c.Status = true, "unified, cpu controller, "+dir+" delegated"
	return c
}

func diskCheck(o HostOptions) HostCheck {
	c := HostCheck{What: "free disk in the cache"}
	dir := o.Cache
	for dir != "" {
		if _, err := os.Stat(dir); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	var st unix.Statfs_t
	if dir == "" || unix.Statfs(dir, &st) != nil {
		c.Status = fmt.Sprintf("cannot measure %q", o.Cache)
		return c
	}
	free := st.Bavail * uint64(st.Bsize)
	gib := func(n uint64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }
	c.OK = free >= o.MinFree
	c.Status = fmt.Sprintf("%s free at %s (a run's builds need about %s)", gib(free), dir, gib(o.MinFree))
	return c
}
