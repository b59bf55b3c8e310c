package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nodezero/nodezero/loadtest"
)

// runLoadtest is `nodezero loadtest`: the flags of package loadtest's
// load program, its report on stdout and its progress on stderr.
func runLoadtest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "loadtest", "measure the service under real or simulated agents (starts nodezero service as a child on 127.0.0.1)", "[flags]",
		"nodezero loadtest --agents sim --hosts 100",
		"nodezero loadtest --agents real --hosts 5 --runs 5")
	var o loadtest.Options
	fs.IntVar(&o.Hosts, "hosts", 1000, "number of agents")
	fs.StringVar(&o.Agents, "agents", "sim", "real: nodezero agent processes on the test hardware trees (at most 5); sim: simulated agents")
	fs.IntVar(&o.Runs, "runs", 1, "runs, each with a fresh service and data directory")
	fs.IntVar(&o.Startups, "startups", 5, "extra service starts for the startup figure (process start to first /health answer)")
	fs.DurationVar(&o.Idle, "idle", 30*time.Second, "how long to measure the service once every host is known and nothing changes")
	fs.StringVar(&o.Cadence, "cadence", loadtest.LongPoll, loadtest.LongPoll+": the agents long-poll with ?wait= (--wait), as nodezero's agent does; "+
		loadtest.Upstream+": they never long-poll and sleep next_instruction_seconds between requests, as assisted-installer-agent does (the same as --wait 0)")
	fs.DurationVar(&o.Wait, "wait", 30*time.Second, "the agents' long-poll ?wait= (--cadence "+loadtest.LongPoll+"); 0 is --cadence "+loadtest.Upstream)
	fs.DurationVar(&o.Ramp, "ramp", 0, "sim: spread the agents' starts evenly over this long (0: all at once)")
	fs.DurationVar(&o.Poll, "poll", 250*time.Millisecond, "how often the host list is polled while hosts come up")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "give up on a run whose hosts are not all known by then")
	fs.StringVar(&o.Bin, "bin", "", "nodezero binary to run as the service (and real agents); default: this binary")
	fs.StringVar(&o.Dir, "dir", "", "work directory, kept afterwards; default: a temporary directory, removed")
	fs.StringVar(&o.HW, "hw", "testdata/hw", "directory of the hardware trees for --agents real")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.StringVar(&o.Pprof, "service-pprof", "", "start each run's service with --pprof on this loopback address, to profile it")
	fs.BoolVar(&o.Install, "install", true, "sim: after the idle window, give the hosts their roles and install the cluster until it is installed (false: stop at ready)")
	fs.IntVar(&o.DiskMiB, "disk-mib", 1, "sim: MiB of image each host writes to its disk, a sparse file in the work directory (0: the ignition only)")
	fs.DurationVar(&o.Write, "write", 2*time.Second, "sim: how long writing a disk takes (its progress reports are spread over it)")
	fs.DurationVar(&o.Reboot, "reboot", time.Second, "sim: the delay from Rebooting to the reboot (a real host waits a minute)")
	fs.DurationVar(&o.InstallPoll, "install-poll", 5*time.Second, "sim: how often the installer's waits list the cluster's hosts (the real installer's 5 s)")
	fs.DurationVar(&o.InstallTimeout, "install-timeout", 10*time.Minute, "give up on an install whose cluster is not installed by then")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	waitSet := false
	fs.Visit(func(f *flag.Flag) { waitSet = waitSet || f.Name == "wait" })
	if err := o.Check(waitSet); err != nil {
		return err
	}
	if o.Bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("loadtest: --bin: %w", err)
		}
		o.Bin = exe
	}
	rep, err := loadtest.Run(ctx, o, stderr)
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}
