package pipeline

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"

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
