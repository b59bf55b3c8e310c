package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/nodezero/nodezero/wire"
)

// dirs settles the work directory (refused when an earlier run used it,
// unless Resume or Fresh) and the paths. created says whether this run
// made the directory.
func (r *run) dirs() (created bool, err error) {
	o := &r.o
	if o.Resume && o.Fresh {
		return false, errors.New("sandbox: --resume and --fresh: give one (continue the earlier install, or wipe it)")
	}
	if o.Dir == "" {
		if o.Resume {
			return false, errors.New("sandbox: --resume needs the --dir of the sandbox to continue")
		}
		if o.Dir, err = os.MkdirTemp("/var/tmp", "nodezero-sandbox-"); err != nil {
			return false, err
		}
		created = true
	}
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return created, err
	}
	what, notSandbox, err := usedDir(o.Dir)
	if err != nil {
		return created, err
	}
	switch {
	case notSandbox:
		return created, fmt.Errorf("sandbox: %s is not empty and holds no sandbox: give a new or empty --dir", o.Dir)
	case what == "" && o.Resume:
		return created, fmt.Errorf("sandbox: --resume: %s holds no sandbox to continue", o.Dir)
	case what == "":
		if !created && !exists(o.Dir) {
			created = true
		}
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return created, err
		}
	case o.Fresh:
		if locked(o.Dir) {
			return false, fmt.Errorf("sandbox: --fresh: a sandbox runs in %s: stop it first", o.Dir)
		}
		if err := wipe(o.Dir); err != nil {
			return false, fmt.Errorf("sandbox: --fresh: %w", err)
		}
	case o.Resume:
		st, err := readState(o.Dir)
		if err != nil {
			return false, fmt.Errorf("sandbox: --resume: %s was made by an older nodezero (no %s to resume from): give --fresh to install anew (%w)", o.Dir, StateFile, err)
		}
		if o.NetNS {
			return false, errors.New("sandbox: --resume runs on loopback only: a --netns sandbox's test bed is gone with it (give --fresh)")
		}
		r.state, r.resumed = st, true
		o.Masters, o.Workers, o.APITLS = st.Masters, st.Workers, st.APITLS
		o.Disks, o.DisksTmpfs = st.Disks, st.DisksTmpfs
	default:
		return false, fmt.Errorf("sandbox: %w: %s holds %s; give --resume to continue it at the same addresses, --fresh to wipe it and install anew, or another --dir", ErrUsedDir, o.Dir, what)
	}
	if o.HW != "" {
		if o.HW, err = filepath.Abs(o.HW); err != nil {
			return created, err
		}
	}
	switch {
	case o.Disks != "":
		if o.Disks, err = filepath.Abs(o.Disks); err != nil {
			return created, err
		}
	case o.DisksTmpfs:
		o.Disks = tmpfsDisks(o.Dir)
	default:
		o.Disks = filepath.Join(o.Dir, "disks")
	}
	r.installDir = filepath.Join(o.Dir, "install")
	return created, nil
}

// alreadyInstalled is --resume of an installed sandbox: it says so and
// what comes next, and starts nothing.
func (r *run) alreadyInstalled() error {
	o := r.o
	sum, _ := readSummary(o.Dir)
	fmt.Fprintf(o.Stdout, "sandbox in %s: cluster %s is installed; nothing to resume\n", o.Dir, r.state.ClusterID)
	api := "http://" + netip.MustParsePrefix(r.state.Prefix).Addr().Next().String() + ":8090"
	kubeAPI := ""
	if sum != nil {
		api, kubeAPI = sum.URL, sum.KubeAPI
	}
	nextSteps(o.Dir, r.installDir, filepath.Join(r.installDir, o.ConfigImage.StateFile), api, kubeAPI, false, false).print(o.Stdout)
	return nil
}

// setDisks makes the hosts' disk directories and says where they are:
// on a tmpfs the disk-speed check measures memory; on a real disk the
// sandbox's node zero judges it against a threshold of its own.
func (r *run) setDisks() error {
	o := r.o
	if err := os.MkdirAll(o.Disks, 0o755); err != nil {
		return fmt.Errorf("sandbox: disks: %w", err)
	}
	if isSandboxShm(o.Disks) {
		if err := os.WriteFile(filepath.Join(o.Disks, ownerFile), []byte(o.Dir+"\n"), 0o644); err != nil {
			return err
		}
	}
	r.env = hostsEnv(o.Disks)
	if onTmpfs(o.Disks) {
		r.say("disks in %s: a tmpfs, memory (%d hosts × up to %d MiB; removed after an install unless --keep)", o.Disks, len(r.hosts), o.ImageSize>>20)
		return nil
	}
	r.say("disks in %s; disk-speed threshold %d ms for the sandbox (assisted's 10 ms is an etcd disk's, not a file on this machine's disk written by %s at once; --disks-tmpfs keeps 10 ms)", o.Disks, sandboxDiskSpeedMs, count(len(r.hosts), "host"))
	return nil
}

// saveState writes DIR/sandbox.json with the cluster as last seen.
func (r *run) saveState(clusterID string, status wire.ClusterStatus) error {
	st := r.state
	if st == nil {
		st = &State{}
		r.state = st
	}
	st.Prefix, st.Masters, st.Workers, st.APITLS = r.prefix.String(), r.o.Masters, r.o.Workers, r.o.APITLS
	st.DNS, st.Registry, st.NTP = r.dnsAddr, r.registry, r.ntpAddr
	st.Disks, st.DisksTmpfs = r.o.Disks, r.o.DisksTmpfs
	if clusterID != "" {
		st.ClusterID, st.Status = clusterID, status
	}
	return writeState(r.o.Dir, st)
}
