package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/cmd/nodezero/internal/gather"
	"github.com/nodezero/nodezero/internal/atomicfile"
)

// runGather is `nodezero gather`: the support bundle of this host, as
// ABI's agent-gather makes it (package gather says what is in it).
func runGather(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gather", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "/", "the host's root directory; anything but / is a test or sandbox host (no journal)")
	dataDir := fs.String("data-dir", "", "node zero: the service's data directory (default ROOT"+gather.DataDirPath+")")
	var output string
	const outputUsage = "write the bundle to FILE, - for stdout (default ./agent-gather-HOST-TIME.tar.gz)"
	fs.StringVar(&output, "output", "", outputUsage)
	fs.StringVar(&output, "O", "", outputUsage)
	since := fs.String("since", "", `collect the journal from this time on, as journalctl --since reads it ("2 hours ago", "2025-06-01 14:00")`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("gather: unexpected argument %q", fs.Arg(0))
	}
	r, err := filepath.Abs(*root)
	if err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	live := r == "/"
	now := time.Now().UTC()
	host := hostName(r, live)
	name := "agent-gather-" + host + "-" + now.Format("20060102T150405Z")
	o := gather.Options{
		Root: r, DataDir: *dataDir, Journal: live, Since: *since,
		Dir: name, Host: host, Version: version, Now: func() time.Time { return now },
	}
	if !live {
		// A sandbox host's log sits beside its root.
		if p := filepath.Join(filepath.Dir(r), "run.log"); fileExists(p) {
			o.ExtraLogs = append(o.ExtraLogs, p)
		}
	}
	if output == "-" {
		rep, err := gather.Write(ctx, o, stdout)
		if err != nil {
			return fmt.Errorf("gather: %w", err)
		}
		fmt.Fprintf(stderr, "nodezero gather: wrote the bundle to stdout: %s\n", rep.Summary())
		return nil
	}
	if output == "" {
		output = name + ".tar.gz"
	}
	rep, err := writeBundle(ctx, o, output)
	if err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	fmt.Fprintf(stderr, "nodezero gather: wrote %s: %s (see %s/%s)\n", output, rep.Summary(), name, gather.ManifestName)
	return nil
}

// writeBundle writes the bundle to a temporary file beside path and
// renames it into place: a failed gather leaves no half bundle. The bundle
// is 0600: redacted, it still describes the host in detail.
func writeBundle(ctx context.Context, o gather.Options, path string) (*gather.Report, error) {
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, err // a bundle goes into a directory that exists
	}
	var rep *gather.Report
	err := atomicfile.Stream(path, 0o600, func(w io.Writer) error {
		var err error
		rep, err = gather.Write(ctx, o, w)
		return err
	})
	return rep, err
}

// hostName names the host for the bundle's file name: the root's
// /etc/hostname, or the kernel's on the live host.
func hostName(root string, live bool) string {
	name := ""
	if b, err := os.ReadFile(filepath.Join(root, "etc/hostname")); err == nil {
		name = strings.TrimSpace(string(b))
	}
	if name == "" && live {
		name, _ = os.Hostname()
	}
	if name == "" {
		name = "unknown"
	}
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, name)
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
