package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/secretenv"
	"github.com/patchproof/patchproof/pipeline/results"
)

// cacheCmd is `patchproof cache`: the builds in the cache, and
// `patchproof cache prune`, which removes them to the limit as a run does.
func cacheCmd(_ context.Context, stdout, stderr io.Writer, args []string) error {
	prune := len(args) > 0 && args[0] == "prune"
	name := "cache"
	if prune {
		name, args = "cache prune", args[1:]
	}
	fs := newFlagSet(name, stdout)
	dir := fs.String("cache", "", "cache `DIR` (default $PATCHPROOF_CACHE or ~/.cache/patchproof)")
	maxFlag := fs.String("cache-max", "", "the builds' limit: `SIZE` in bytes, or with KiB, MiB, GiB (default a quarter of the cache's file system, at most 50GiB)")
	var dryRun *bool
	if prune {
		dryRun = fs.Bool("dry-run", false, "say what would be removed, remove nothing")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	from, err := resolveCache(dir)
	if err != nil {
		return err
	}
	// A cache named that is not there is a typo, not an empty cache; the
	// default one is absent until a run makes it.
	if err := checkCacheDir(from, *dir, from != ""); err != nil {
		return err
	}
	var max int64
	if *maxFlag != "" {
		var err error
		if max, err = parseSize("--cache-max", *maxFlag); err != nil {
			return err
		}
	}
	if max == 0 {
		var err error
		if max, err = builders.DefaultCacheMax(*dir); err != nil {
			return err
		}
	}
	if !prune {
		ents, err := builders.Entries(*dir)
		if err != nil {
			return err
		}
		writeEntries(stdout, ents, max)
		return nil
	}
	do := builders.Prune
	if *dryRun {
		do = builders.PrunePlan
	}
	removed, err := do(*dir, max, nil, stdout)
	if err != nil {
		return err
	}
	var freed int64
	for _, e := range removed {
		freed += e.Size
	}
	verb := "removed"
	if *dryRun {
		verb = "would remove"
	}
	fmt.Fprintf(stdout, "%s %d builds, %s\n", verb, len(removed), formatSize(freed))
	return nil
}

// resolveCache fills *dir with the cache directory: --cache, else
// $PATCHPROOF_CACHE, else the default. It returns how the directory was
// named, for errors, "" for the default.
func resolveCache(dir *string) (from string, err error) {
	switch {
	case *dir != "":
		return "--cache", nil
	case secretenv.Getenv("PATCHPROOF_CACHE") != "":
		*dir = secretenv.Getenv("PATCHPROOF_CACHE")
		return "$PATCHPROOF_CACHE", nil
	}
	*dir, err = cachedir.Default(secretenv.Getenv)
	return "", err
}

// checkCacheDir refuses, as bad input naming it, a cache directory that
// is something else (a file, a device), or that could not be made (its
// nearest existing directory is a file), or, with exist, that is not
// there at all.
func checkCacheDir(from, dir string, exist bool) error {
	if from == "" {
		from = "cache"
	}
	bad := func(err error) error { return &results.InputError{Input: from + " " + dir, Err: err} }
	fi, err := os.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return bad(errors.New("not a directory"))
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return bad(err)
	case exist && errors.Is(err, fs.ErrNotExist):
		return bad(errors.New("no such directory"))
	}
	// Not there: a run would make it, unless what it would be made in is
	// not a directory.
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			if exist {
				return bad(errors.New("no such directory"))
			}
			return nil
		case err == nil:
			return bad(fmt.Errorf("%s is not a directory", p))
		case p == filepath.Dir(p):
			return bad(err)
		}
	}
}

// writeEntries lists the builds, least recently used first (the first to
// be pruned), and their total against the limit.
func writeEntries(w io.Writer, ents []builders.Entry, max int64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tLABEL\tSIDE\tVARIANT\tSIZE\tLAST USED\tIN USE")
	var total int64
	for _, e := range ents {
		label := e.Label
		if e.Damaged != "" {
			label = "(damaged: rebuilt when next used)"
		}
		inUse := "no"
		if e.InUse {
			inUse = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Key, label, e.Side, e.Variant,
			formatSize(e.Size), e.LastUsed.UTC().Format(time.RFC3339), inUse)
		total += e.Size
	}
	tw.Flush()
	fmt.Fprintf(w, "%d builds, %s of a limit of %s\n", len(ents), formatSize(total), formatSize(max))
}

// formatSize writes n bytes in the largest unit it makes at least one of.
func formatSize(n int64) string {
	for _, u := range sizeUnits {
		if n >= u.size {
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}
