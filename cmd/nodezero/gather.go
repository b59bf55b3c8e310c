package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/gather"
)

// runGather is `nodezero gather`: the support bundle of this host, as
// ABI's agent-gather makes it (package gather says what is in it).
func runGather(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "gather", "a support bundle of this host: logs, journal, node zero's store, network state and config, secrets redacted", "[flags]",
		"nodezero gather                    # ./agent-gather-HOST-TIME.tar.gz",
		"nodezero gather -O - | ssh me@workstation 'cat > bundle.tar.gz'")
	root := fs.String("root", "/", "the host's root directory; anything but / is a test or sandbox host (no journal)")
	dataDir := fs.String("data-dir", "", "node zero: the service's data directory (default ROOT"+gather.DataDirPath+")")
	var output string
	const outputUsage = "write the bundle to FILE, - for stdout (default ./agent-gather-HOST-TIME.tar.gz)"
	fs.StringVar(&output, "output", "", outputUsage)
	fs.StringVar(&output, "O", "", "short for --output")
	since := fs.String("since", "", `collect the journal from this time on, as journalctl --since reads it ("2 hours ago", "2025-06-01 14:00")`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	r, err := filepath.Abs(*root)
	if err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
		return fmt.Errorf("gather: --root %s: not a directory: give the root of the host to gather (/ for this one)", *root)
	}
	o := gather.ForRoot(r, *dataDir, *since, version, time.Now())
	if output == "-" {
		rep, err := gather.Write(ctx, o, stdout)
		if err != nil {
			return fmt.Errorf("gather: %w", err)
		}
		fmt.Fprintf(stderr, "nodezero gather: wrote the bundle to stdout: %s\n", rep.Summary())
		return nil
	}
	if output == "" {
		output = o.Dir + ".tar.gz"
	}
	rep, err := gather.WriteFile(ctx, o, output)
	if err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	fmt.Fprintf(stderr, "nodezero gather: wrote %s: %s (see %s/%s)\n", output, rep.Summary(), o.Dir, gather.ManifestName)
	return nil
}
