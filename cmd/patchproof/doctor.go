package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/secretenv"
	"github.com/patchproof/patchproof/pipeline"
)

func doctorCmd(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("doctor", stdout)
	given := fs.String("builder", string(builders.KindHost), "the builder to check for: host or docker")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	builder, err := parseValue("--builder", *given, builders.ParseExecutorKind)
	if err != nil {
		return err
	}
	reqs := pipeline.Requirements(builder)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tTOOL\tSTATUS\tPACKAGE\tWHY")
	missingRequired := 0
	for _, r := range reqs {
		status := "ok " + r.Found
		switch {
		case r.Tool == "":
			status = "built in"
		case r.Found == "" && r.Optional:
			status = "missing (optional)"
		case r.Found == "":
			status = "MISSING"
			missingRequired++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Stage, r.Tool, status, r.Package, r.Why)
	}
	tw.Flush()
	if pkgs := pipeline.MissingPackages(reqs); len(pkgs) > 0 {
		fmt.Fprintf(stdout, "\nInstall what is missing:\n  apt-get install -y --no-install-recommends %s\n", strings.Join(pkgs, " "))
	}
	if builder == builders.KindDocker {
		fmt.Fprintln(stdout, "\nDocker mode:")
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		for _, c := range pipeline.DockerChecks(ctx, &pipeline.Config{Getenv: secretenv.Getenv}) {
			mark := "ok"
			if !c.OK {
				mark = "MISSING"
				missingRequired++
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.What, mark, c.Status)
		}
		tw.Flush()
	}
	if missingRequired > 0 {
		return fmt.Errorf("doctor: %d required tools missing", missingRequired)
	}
	return nil
}
