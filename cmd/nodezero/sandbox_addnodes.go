package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nodezero/nodezero/sandbox"
)

// runSandboxAddNodes is `nodezero sandbox add-nodes`: day 2 against a
// running sandbox (package sandbox's AddNodes).
func runSandboxAddNodes(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "sandbox add-nodes", "add workers to the installed cluster of a running sandbox (nodezero sandbox --keep-running), as oc adm node-image create and monitor do: a node config image from the cluster's API, new hosts booted from it, each its own node zero installing itself, followed until its Node is Ready", "--dir D [--workers N] [flags]",
		"nodezero sandbox add-nodes --dir /var/tmp/my-sandbox --workers 2")
	o := sandbox.AddNodesOptions{Stdout: stdout}
	fs.StringVar(&o.Dir, "dir", "", "the running sandbox's directory (its cluster installed, started with --keep-running)")
	fs.IntVar(&o.Workers, "workers", 1, "how many workers to add")
	fs.BoolVar(&o.Approve, "approve", true, "approve the added hosts' CSRs (client and serving) as they appear, as a person does with oc adm certificate approve")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "give up when the hosts are not Ready nodes by then")
	fs.DurationVar(&o.CheckInterval, "check-interval", 10*time.Second, "how often the added hosts repeat their host checks")
	fs.BoolVar(&o.KeepRunning, "keep-running", false, "leave the added hosts running afterwards until interrupted")
	fs.StringVar(&o.Bin, "bin", "", "the nodezero binary the hosts run (default: this one)")
	fs.StringVar(&o.LogLevel, "log-level", "info", "the hosts' log level")
	fs.StringVar(&o.NoDiskHint, "fault-no-disk", "", "tests: this added host's root device hints name a disk it does not have")
	fs.DurationVar(&o.TokenTTL, "token-ttl", 0, "how long the node config image's tokens last (default 48h; negative: already expired, for tests)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if o.Dir == "" {
		fs.Usage()
		return fmt.Errorf("sandbox add-nodes: --dir: which sandbox? (the directory of a running nodezero sandbox --keep-running)")
	}
	if o.Bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.Bin = exe
	}
	return sandbox.AddNodes(ctx, o)
}
