package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/secretenv"
	"github.com/patchproof/patchproof/pipeline"
	"github.com/patchproof/patchproof/pipeline/results"
)

// doctorReport is what doctor found, as --json prints it.
type doctorReport struct {
	Builder      string                 `json:"builder"`
	Stages       []string               `json:"stages"`
	Requirements []pipeline.Requirement `json:"requirements"`
	Install      []string               `json:"install,omitempty"` // the Debian packages of what is missing
	Host         []pipeline.HostCheck   `json:"host"`
	Docker       []pipeline.DockerCheck `json:"docker,omitempty"`
	// Missing counts what is required and missing; OK is Missing == 0.
	Missing int  `json:"missing"`
	OK      bool `json:"ok"`
}

func doctorCmd(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("doctor", stdout)
	given := fs.String("builder", string(builders.KindHost), "the builder to check for: host or docker")
	stages := fs.String("stages", "", "check only what these `STAGES` need ("+strings.Join(pipeline.StageNames(), ",")+"; default all)")
	cache := fs.String("cache", "", "the cache `DIR` whose free disk is checked (default $PATCHPROOF_CACHE or ~/.cache/patchproof)")
	asJSON := fs.Bool("json", false, "print the checks as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	builder, err := parseValue("--builder", *given, builders.ParseExecutorKind)
	if err != nil {
		return err
	}
	var set pipeline.StageSet
	if *stages != "" {
		items, err := splitList("--stages", *stages, false)
		if err != nil {
			return err
		}
		if set, err = pipeline.ParseStageSet(items); err != nil {
			return &results.InputError{Input: "--stages " + *stages, Err: err}
		}
	}
	from, err := resolveCache(cache)
	if err != nil {
		return err
	}
	// Its free disk is checked: one that is no directory (or could not
	// be made) would report another file system's.
	if err := checkCacheDir(from, *cache, false); err != nil {
		return err
	}
	rep := doctorReport{Builder: string(builder), Stages: set.Names(), Requirements: pipeline.RequirementsOf(builder, set),
		Host: pipeline.HostChecks(pipeline.HostOptions{Stages: set, Builder: builder, Cache: *cache, Euid: -1})}
	rep.Install = pipeline.MissingPackages(rep.Requirements)
	for _, r := range rep.Requirements {
		if r.Tool != "" && r.Found == "" && !r.Optional {
			rep.Missing++
		}
	}
	for _, c := range rep.Host {
		if !c.OK && !c.Optional {
			rep.Missing++
		}
	}
	if builder == builders.KindDocker {
		rep.Docker = pipeline.DockerChecks(ctx, &pipeline.Config{Getenv: secretenv.Getenv})
		for _, c := range rep.Docker {
			if !c.OK {
				rep.Missing++
			}
		}
	}
	rep.OK = rep.Missing == 0
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("doctor: %w", err)
		}
	} else {
		writeDoctor(stdout, rep)
	}
	if rep.Missing > 0 {
		return fmt.Errorf("doctor: %d required things missing", rep.Missing)
	}
	return nil
}

// writeDoctor prints the report as tables a person reads.
func writeDoctor(w io.Writer, rep doctorReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tTOOL\tSTATUS\tPACKAGE\tWHY")
	for _, r := range rep.Requirements {
		status := "ok " + r.Found
		switch {
		case r.Tool == "":
			status = "built in"
		case r.Found == "" && r.Optional:
			status = "missing (optional)"
		case r.Found == "":
			status = "MISSING"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Stage, r.Tool, status, r.Package, r.Why)
	}
	tw.Flush()
	if len(rep.Install) > 0 {
		fmt.Fprintf(w, "\nInstall what is missing:\n  apt-get install -y --no-install-recommends %s\n", strings.Join(rep.Install, " "))
	}
	if len(rep.Host) > 0 {
		fmt.Fprintln(w, "\nThis machine:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range rep.Host {
			mark := "ok"
			switch {
			case !c.OK && c.Optional:
				mark = "missing (optional)"
			case !c.OK:
				mark = "MISSING"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.What, mark, c.Status)
		}
		tw.Flush()
	}
	if len(rep.Docker) > 0 {
		fmt.Fprintln(w, "\nDocker mode:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range rep.Docker {
			mark := "ok"
			if !c.OK {
				mark = "MISSING"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.What, mark, c.Status)
		}
		tw.Flush()
	}
}
