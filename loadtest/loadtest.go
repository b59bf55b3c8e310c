package loadtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Run runs the startup samples and every run, writing its progress to
// progress. Without a work directory it makes a temporary one, removed
// after a load test that succeeded and kept, named on progress, after one
// that failed.
func Run(ctx context.Context, o Options, progress io.Writer) (*Report, error) {
	temp := o.Dir == ""
	if temp {
		d, err := os.MkdirTemp("", "nodezero-loadtest-")
		if err != nil {
			return nil, fmt.Errorf("loadtest: %w", err)
		}
		o.Dir = d
	}
	rep, err := run(ctx, o, progress)
	if err != nil {
		if temp {
			fmt.Fprintf(progress, "loadtest: kept %s for its logs\n", o.Dir)
		}
		return nil, err
	}
	if temp {
		if err := os.RemoveAll(o.Dir); err != nil {
			return nil, fmt.Errorf("loadtest: %w", err)
		}
	}
	return rep, nil
}

// run runs the startup samples and every run in o.Dir.
func run(ctx context.Context, o Options, progress io.Writer) (*Report, error) {
	rep := &Report{Mode: o.Agents, Hosts: o.Hosts, Cadence: o.Cadence, Wait: o.Wait.String(), Idle: o.Idle.String(), Ramp: o.Ramp.String(), Bin: o.Bin}
	switch {
	case o.Install && o.Agents == "sim":
		rep.DiskMiB, rep.Write, rep.Reboot, rep.InstallPoll = o.DiskMiB, o.Write.String(), o.Reboot.String(), o.InstallPoll.String()
	case o.Install:
		// A hardware-tree host installs only under the sandbox, which
		// restarts it after its reboot.
		fmt.Fprintln(progress, "loadtest: the install runs with simulated agents only; real agents stop at ready")
		o.Install = false
	}
	for i := range o.Startups {
		svc, err := StartService(ctx, o.Bin, filepath.Join(o.Dir, fmt.Sprintf("startup-%d", i+1)))
		if err != nil {
			return nil, fmt.Errorf("loadtest: startup sample %d: %w", i+1, err)
		}
		rep.StartupSamplesMs = append(rep.StartupSamplesMs, ms(svc.firstAnswer))
		if err := svc.Stop(); err != nil {
			return nil, fmt.Errorf("loadtest: startup sample %d: %w", i+1, err)
		}
	}
	for r := range o.Runs {
		fmt.Fprintf(progress, "loadtest: run %d of %d: %d %s agents\n", r+1, o.Runs, o.Hosts, o.Agents)
		rr, err := runOnce(ctx, o, filepath.Join(o.Dir, fmt.Sprintf("run-%d", r+1)), progress)
		if err != nil {
			return nil, fmt.Errorf("loadtest: run %d: %w", r+1, err)
		}
		rep.Runs = append(rep.Runs, rr)
		rep.StartupSamplesMs = append(rep.StartupSamplesMs, rr.StartupMs)
	}
	rep.summarise()
	return rep, nil
}
