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

// Requirement is a host tool a stage needs.
type Requirement struct {
	Stage    string `json:"stage"`
	Tool     string `json:"tool"`    // a program looked up in PATH
	Package  string `json:"package"` // the Debian package that has it
	Why      string `json:"why"`
	Optional bool   `json:"optional,omitempty"`
	Found    string `json:"found,omitempty"` // its path, when found
}

// Requirements lists what each stage needs on this host for a builder.
func Requirements(builder builders.ExecutorKind) []Requirement {
	reqs := []Requirement{
		{Stage: "checkout", Tool: "", Package: "", Why: "go-git is built in; the demo downloads Debian's php8.2 source package once"},
	}
	switch builder {
	case builders.KindDocker:
		reqs = append(reqs,
			Requirement{Stage: "build", Tool: "dockerd", Package: "docker.io", Why: "the Docker engine the builds run in"},
			Requirement{Stage: "build", Tool: "debootstrap", Package: "debootstrap", Why: "makes the Debian base image where no registry is reachable"},
		)
	default:
		reqs = append(reqs,
			Requirement{Stage: "build", Tool: "gcc", Package: "gcc", Why: "compiles PHP"},
			Requirement{Stage: "build", Tool: "make", Package: "make", Why: "runs PHP's build"},
			Requirement{Stage: "build", Tool: "pkg-config", Package: "pkg-config", Why: "configure finds libraries with it"},
			Requirement{Stage: "build", Tool: "apxs2", Package: "apache2-dev", Why: "ZTS builds the Apache module the benchmark loads"},
			Requirement{Stage: "build", Tool: "autoconf", Package: "autoconf", Why: "git checkouts have no configure: ./buildconf"},
			Requirement{Stage: "build", Tool: "bison", Package: "bison", Why: "git checkouts generate their parsers"},
			Requirement{Stage: "build", Tool: "re2c", Package: "re2c", Why: "git checkouts generate their scanners"},
			Requirement{Stage: "build", Tool: "ccache", Package: "ccache", Why: "a head build after its base recompiles only what changed", Optional: true},
		)
	}
	if builder != builders.KindDocker {
		// Under docker the server runs in a container of an image with
		// Debian's MariaDB, and the suites in the build image.
		reqs = append(reqs,
			Requirement{Stage: "tests", Tool: "mariadbd", Package: "mariadb-server", Why: "the MySQL-compatible server the suites run against"},
			Requirement{Stage: "tests", Tool: "mariadb-install-db", Package: "mariadb-server", Why: "initialises the server's datadir"},
		)
	}
	if builder != builders.KindDocker {
		// Under docker Apache and valgrind are in the serve image.
		reqs = append(reqs,
			Requirement{Stage: "race", Tool: "apache2", Package: "apache2", Why: "16 threads of one process serve the concurrency check"},
			Requirement{Stage: "bench", Tool: "apache2", Package: "apache2", Why: "mpm_event with 16 threads loads the ZTS module"},
			Requirement{Stage: "bench", Tool: "valgrind", Package: "valgrind", Why: "callgrind counts instructions per request"},
		)
	}
	reqs = append(reqs,
		Requirement{Stage: "race", Tool: "addr2line", Package: "binutils", Why: "names the frames of ThreadSanitizer's reports"},
		Requirement{Stage: "race", Tool: "gcc", Package: "libtsan2", Why: "-fsanitize=thread and the TSan runtime (gcc -print-file-name=libtsan.so)"},
		Requirement{Stage: "bench", Tool: "wrk", Package: "wrk", Why: "the HTTP load"},
		Requirement{Stage: "bench", Tool: "gcc", Package: "gcc", Why: "compiles the lock counter"},
	)
	for i := range reqs {
		if reqs[i].Tool == "" {
			continue
		}
		if p, err := exec.LookPath(reqs[i].Tool); err == nil {
			reqs[i].Found = p
		} else if p, err := exec.LookPath("/usr/sbin/" + reqs[i].Tool); err == nil {
			reqs[i].Found = p
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
