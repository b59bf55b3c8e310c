package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/factoryimage"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/node/console"
	"github.com/nodezero/nodezero/sandbox"
)

// runSandbox is `nodezero sandbox`: a whole cluster installed on this
// machine (package sandbox).
func runSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "clean" {
		return runSandboxClean(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "add-nodes" {
		return runSandboxAddNodes(ctx, args[1:], stdout, stderr)
	}
	fs := newFlags(stderr, "sandbox", "install a whole cluster on this machine, every host a process on loopback, to installed; `nodezero sandbox add-nodes` adds workers to it on day 2; `nodezero sandbox clean` removes leftover disks", "[flags] | add-nodes --dir D [--workers N] | clean [--dir D]",
		"nodezero sandbox --dir /var/tmp/my-sandbox",
		"nodezero sandbox --dir /var/tmp/my-sandbox --resume",
		"nodezero sandbox --masters 1 --workers 0 --disks-tmpfs",
		"nodezero sandbox --dir /var/tmp/my-sandbox --masters 3 --workers 0 --keep-running   (then, from another terminal:)",
		"nodezero sandbox add-nodes --dir /var/tmp/my-sandbox --workers 2",
		"nodezero sandbox clean --dir /var/tmp/my-sandbox")
	o := sandbox.Options{Stdout: stdout, Stderr: stderr, ConfigImage: sandboxConfigImage()}
	fs.StringVar(&o.Dir, "dir", "", "work directory, kept afterwards (default: a new directory under /var/tmp); one an earlier run used needs --resume or --fresh")
	fs.BoolVar(&o.Resume, "resume", false, "continue the install an earlier run left in --dir, at the same addresses (an installed one is only reported)")
	fs.BoolVar(&o.Fresh, "fresh", false, "wipe --dir (and its disks) first, and install anew")
	fs.IntVar(&o.Masters, "masters", 3, "control-plane hosts (1: single node, 3: compact or with workers)")
	fs.IntVar(&o.Workers, "workers", 2, "worker hosts (0-2)")
	fs.StringVar(&o.HW, "hw", "", "directory of the hosts' hardware trees, one per host name (default: the binary's own, written into DIR/hw)")
	fs.StringVar(&o.Disks, "disks", "", "directory of the hosts' disk files (default: DIR/disks)")
	fs.BoolVar(&o.DisksTmpfs, "disks-tmpfs", false, "put the hosts' disk files in /dev/shm (memory) instead of DIR/disks: the disk-speed check then measures memory and keeps assisted's 10 ms threshold (on a real disk the sandbox allows 100 ms)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the hosts' disk files after an install that succeeded (removed by default; a failed install keeps them)")
	fs.StringVar(&o.Payload, "payload", "", "a payload directory to install (default: generate a small OS image with a known digest)")
	sizeMiB := fs.Int64("image-size", 64, "size of the generated OS image, MiB")
	fs.DurationVar(&o.Timeout, "timeout", 15*time.Minute, "give up when the cluster is not installed by then")
	fs.DurationVar(&o.CheckInterval, "check-interval", 10*time.Second, "how often hosts repeat their host checks")
	fs.DurationVar(&o.ControlPlaneTimeout, "control-plane-timeout", 0, "how long the bootstrap host waits for the other control-plane hosts to join (default 60m)")
	fs.BoolVar(&o.KeepRunning, "keep-running", false, "leave the hosts running after the install (node zero keeps serving the API) until interrupted")
	fs.BoolVar(&o.NetNS, "netns", false, "run each host in a network namespace of its own on a test bed's bridge, with its hardware tree's NIC and MAC, instead of on loopback (root; ip, dnsmasq and docker-registry; no kube API)")
	fs.BoolVar(&o.VM, "vm", false, "make every host a QEMU virtual machine booting the factory image under UEFI firmware, on a test bed's bridge: the config image is inserted as a CD, the disk written and the reboot are real (root; qemu, OVMF, and mmdebstrap for the first image build, about 5 min, cached; slow under software emulation: a single node takes several minutes; no kube API)")
	fs.BoolVar(&o.APITLS, "api-tls", false, "serve node zero's API over HTTPS: a CA and a certificate for the rendezvous IP go into the install directory's tls/, and from there into the config image")
	fs.StringVar(&o.Bin, "bin", "", "the nodezero binary the hosts run (default: this one)")
	fs.StringVar(&o.LogLevel, "log-level", "info", "the hosts' log level")
	fs.StringVar(&o.NeverJoin, "fault-never-join", "", "tests: this host, once installed, never joins")
	fs.DurationVar(&o.Settle, "settle", 0, "how long a host booted from its installed disk stays in Configuring and in Joined")
	fs.StringVar(&o.KubeAPI, "kube-api", "auto", "after node zero's reboot, run the installed cluster's Kubernetes API (kube-apiserver and etcd on the API VIP, opened by install/auth/kubeconfig): yes, no, or auto (when the tools are found: make deps)")
	dashboard := fs.String("console", "auto", "show node zero's dashboard while the install runs: yes, no, or auto (when stdout is a terminal)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *dashboard {
	case "yes":
		o.Console = true
	case "auto":
		o.Console = console.IsTerminal(stdout)
	case "no":
	default:
		return fmt.Errorf("sandbox: --console %q: want yes, no or auto", *dashboard)
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	switch o.KubeAPI {
	case "yes", "no", "auto":
	default:
		return fmt.Errorf("sandbox: --kube-api %q: want yes, no or auto", o.KubeAPI)
	}
	if o.Masters != 1 && o.Masters != 3 {
		return fmt.Errorf("sandbox: --masters %d: want 1 (single node) or 3", o.Masters)
	}
	if o.Workers < 0 || o.Workers > 2 || (o.Masters == 1 && o.Workers > 0) {
		return fmt.Errorf("sandbox: --workers %d: want 0-2, and 0 with a single node", o.Workers)
	}
	if *sizeMiB < 3 {
		// The OS image's partition table and Ignition partition take
		// 2 MiB; the flag is in MiB, and so is the error.
		return fmt.Errorf("sandbox: --image-size %d: want at least 3 (MiB)", *sizeMiB)
	}
	o.ImageSize = *sizeMiB << 20
	if o.Bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.Bin = exe
	}
	if o.VM {
		if o.Resume {
			return fmt.Errorf("sandbox: --vm --resume: not yet; give --fresh")
		}
		o.NetNS, o.KubeAPI, o.VMImage = true, "no", sandboxVMImage(o.Bin)
		timeoutSet := false
		fs.Visit(func(f *flag.Flag) { timeoutSet = timeoutSet || f.Name == "timeout" })
		if !timeoutSet {
			o.Timeout = vmTimeout
		}
	}
	return sandbox.Run(ctx, o)
}

// runSandboxClean is `nodezero sandbox clean`: leftover disks go.
func runSandboxClean(args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "sandbox clean", "remove sandboxes' leftover disk files: every /dev/shm/nodezero-sandbox-* whose sandbox is not running, and with --dir that sandbox's disks; prints the space freed", "[--dir D]",
		"nodezero sandbox clean",
		"nodezero sandbox clean --dir /var/tmp/my-sandbox")
	dir := fs.String("dir", "", "a sandbox directory whose disks go too (the rest of it stays)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	return sandbox.Clean(sandbox.CleanOptions{Dir: *dir, Stdout: stdout})
}

// vmTimeout is a VM sandbox's default --timeout: every step runs under
// software emulation (a single node takes several minutes, 3 + 2 tens).
const vmTimeout = 90 * time.Minute

// sandboxVMImage is `create factory-image` as a VM sandbox needs it: the
// factory image of the binary the hosts run, its tools' output in
// DIR/build.log.
func sandboxVMImage(bin string) sandbox.VMImage {
	return sandbox.VMImage{
		Create: func(ctx context.Context, dir string, p diskwrite.Payload, env []string) (string, error) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", err
			}
			log, err := os.Create(filepath.Join(dir, "build.log"))
			if err != nil {
				return "", err
			}
			defer log.Close()
			res, err := factoryimage.Build(ctx, factoryimage.Options{Dir: dir, Binary: bin, Payload: p, ServiceEnv: env, Log: log})
			if err != nil {
				return "", fmt.Errorf("%w (the build's log: %s)", err, log.Name())
			}
			return res.QCOW2, nil
		},
	}
}

// sandboxConfigImage is `create config-image` and its state file, as the
// sandbox makes its config image.
func sandboxConfigImage() sandbox.ConfigImage {
	return sandbox.ConfigImage{
		Create: func(ctx context.Context, dir, release string) error {
			var out bytes.Buffer
			if err := runCreateConfigImage(ctx, []string{"--dir", dir, "--release-image", release}, &out, &out); err != nil {
				return fmt.Errorf("%w\n%s", err, out.String())
			}
			return nil
		},
		State:     loadOrCreateState,
		StateFile: stateFile,
	}
}

// apiCAFile is where an install directory's API CA lies (tls/ca.crt).
func apiCAFile(installDir string) string { return sandbox.APICAFile(installDir) }
