package main

import (
	"context"
	"io"
)

func reportCmd(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return usageErrorf("report: not yet available")
}
