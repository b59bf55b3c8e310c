package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// needRoot is testbed.NeedRoot: fail under CI=true, skip elsewhere.
var needRoot = testbed.NeedRoot

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// bedHost is one `nodezero run` host of the namespace test bed: its
// hardware tree, its config image slot and its current process.
type bedHost struct {
	*testbed.Host
	hw    string   // testdata/hw/<name>
	image string   // the config image file it looks for ("attached" once it exists)
	disks string   // the directory of files standing in for its disks
	extra []string // more `nodezero run` flags
	runs  int
	cmd   *exec.Cmd
	log   string
}

// boot starts `nodezero run` inside the host's namespace; each boot logs
// to its own file.
func (h *bedHost) boot(t *testing.T, ctx context.Context) {
	t.Helper()
	h.runs++
	h.log = filepath.Join(filepath.Dir(h.Root), fmt.Sprintf("%s.run%d.log", h.Name, h.runs))
	f, err := os.Create(h.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h.cmd = h.Command(ctx, nodezeroBinary(t), "run", "--root", h.Root,
		"--config-image", h.image, "--hardware-root", h.hw, "--disks", h.disks,
		"--config-interval", "200ms", "--node-zero-window", "2s", "--node-zero-interval", "200ms",
		"--agent-interval", "2s")
	h.cmd.Args = append(h.cmd.Args, h.extra...)
	h.cmd.Stdout, h.cmd.Stderr = f, f
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := h.cmd
	go func() { _ = cmd.Wait() }()
}

// kill9 kills the host's daemon with SIGKILL, as a power cut would.
func (h *bedHost) kill9(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s: %v", h.Name, err)
	}
	for syscall.Kill(h.cmd.Process.Pid, 0) == nil {
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *bedHost) output() string {
	b, _ := os.ReadFile(h.log)
	return string(b)
}

// waitLog waits until the current boot's log holds s.
func (h *bedHost) waitLog(t *testing.T, s string, timeout time.Duration) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s to log %q", h.Name, s), timeout, func() (bool, string) {
		out := h.output()
		return strings.Contains(out, s), out
	})
}

// netnsTemplate is what the test's install-config and agent-config vary
// in besides the bed's addresses.
type netnsTemplate struct {
	Workers      int
	NTP          string // an additional NTP source; none when ""
	PlatformNone bool
	TrustBundle  string // PEM for additionalTrustBundle; none when ""
}

// netnsInputs renders the test's install-config and agent-config for the
// bed's addresses.
func netnsInputs(t *testing.T, dir string, bed *testbed.Bed, hosts []*bedHost, o netnsTemplate) {
	t.Helper()
	addr := map[string]string{}
	for _, h := range hosts {
		addr[h.Name] = h.Addr.Addr().String()
	}
	base := bed.Prefix.Addr().As4()
	vip := func(n byte) string { b := base; b[3] = n; return netip.AddrFrom4(b).String() }
	data := map[string]any{
		"Prefix": bed.Prefix.String(), "Bits": bed.Prefix.Bits(), "Gateway": bed.Gateway.String(),
		"APIVIP": vip(5), "IngressVIP": vip(4), "Addr": addr, "Workers": o.Workers, "NTP": o.NTP,
		"PlatformNone": o.PlatformNone, "TrustBundle": strings.ReplaceAll(strings.TrimSpace(o.TrustBundle), "\n", "\n  "),
	}
	for _, name := range []string{"install-config.yaml", "agent-config.yaml"} {
		tpl, err := template.ParseFiles(filepath.Join("testdata", "netns", name))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := tpl.Execute(&b, data); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNetnsHostsBootWithRun is DESIGN §4 on five hosts in network
// namespaces: each runs `nodezero run` with only a config image file
// attached and its own hardware tree. Node zero is killed with SIGKILL at
// every stage of its boot and restarted, a worker once after it
// registered; still exactly one host becomes node zero, every host gets
// its hostname, the host with a static network config gets its keyfile
// under its real NIC name, all five reach known and node zero starts the
// install.
func TestNetnsHostsBootWithRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a cluster of hosts booting in network namespaces takes minutes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	n := newNetnsCluster(t, ctx, netnsOptions{Workers: 2})
	hosts, zero := n.hosts, n.zero
	attach := n.attach

	// Node zero boots with no config image: it asks for one. Killed there,
	// it boots again and takes the image once it is attached.
	zero.boot(t, ctx)
	zero.waitLog(t, "Waiting for the configuration", 30*time.Second)
	waitFor(t, "node zero to ask for the config image", 30*time.Second, func() (bool, string) {
		_, err := os.Stat(filepath.Join(zero.Root, "etc/issue.d/60-check-config-image.issue"))
		return err == nil, fmt.Sprint(err)
	})
	zero.kill9(t)
	for _, h := range hosts {
		attach(h)
	}
	// Then once at every later stage's status line.
	for _, stage := range []string{"stage=config", "stage=network", "stage=hostname", "stage=node-zero", "service listening"} {
		zero.boot(t, ctx)
		zero.waitLog(t, stage, time.Minute)
		zero.kill9(t)
	}
	booted := time.Now()
	zero.boot(t, ctx)
	for _, h := range hosts[1:] {
		h.boot(t, ctx)
	}

	c := n.client(t)
	hostsNow := func() (map[string]*wire.Host, string) { return n.hostsNow(t, ctx, c) }

	// A worker killed after it registered comes back as the same host.
	worker := hosts[3]
	waitFor(t, "worker-0 to register", 2*time.Minute, func() (bool, string) {
		hs, desc := hostsNow()
		return hs["worker-0"] != nil, desc
	})
	worker.kill9(t)
	worker.boot(t, ctx)

	// The install started: the cluster went to preparing-for-installation
	// (it may be back at ready by now: the release image is quay.io's,
	// which the bed does not serve, so the preparation fails).
	waitFor(t, "all five hosts registered and the install started by node zero", 3*time.Minute, func() (bool, string) {
		cs, err := c.ListClusters(ctx)
		if err != nil || len(cs) != 1 {
			return false, fmt.Sprintf("clusters: %v", err)
		}
		evs, err := c.ListEvents(ctx, wire.EventsQuery{ClusterID: cs[0].ID})
		if err != nil {
			return false, err.Error()
		}
		started := slices.ContainsFunc(evs, func(e *wire.Event) bool {
			return strings.Contains(e.Message, "status of the cluster to "+string(wire.ClusterStatusPreparingForInstallation))
		})
		hs, desc := hostsNow()
		return len(hs) == 5 && started, fmt.Sprintf("cluster %s (%s); hosts %s", cs[0].Status, cs[0].StatusInfo, desc)
	})
	// A figure for the closing note, not an assertion: from the last boots
	// (a worker rebooted on the way) to the install started.
	t.Logf("all hosts booted → install started: %v", time.Since(booted).Round(10*time.Millisecond))

	// Exactly one node zero, with the bootstrap MAC.
	for _, h := range hosts {
		b, err := os.ReadFile(filepath.Join(h.Root, "etc/assisted/node0"))
		if h == zero {
			if err != nil || !strings.Contains(string(b), "BOOTSTRAP_HOST_MAC="+h.MAC.String()) {
				t.Errorf("node zero's node0: %q %v", b, err)
			}
		} else if err == nil {
			t.Errorf("%s also thinks it is node zero", h.Name)
		}
		issueFile, _ := os.ReadFile(filepath.Join(h.Root, "etc/motd.d/60-rendezvous-host"))
		want := "This host is not the rendezvous host. The rendezvous host is at " + zero.Addr.Addr().String() + "."
		if h == zero {
			want = "This host (" + zero.Addr.Addr().String() + ") is the rendezvous host."
		}
		if strings.TrimSpace(string(issueFile)) != want {
			t.Errorf("%s console: %q, want %q", h.Name, issueFile, want)
		}
		if b, _ := os.ReadFile(filepath.Join(h.Root, "etc/hostname")); strings.TrimSpace(string(b)) != h.Name {
			t.Errorf("%s hostname %q", h.Name, b)
		}
	}
	// Only master-1 has a static config: its keyfile is installed under
	// the NIC's real name with the interface renamed.
	for _, h := range hosts {
		dir := filepath.Join(h.Root, "etc/NetworkManager/system-connections")
		ents, _ := os.ReadDir(dir)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		want := ""
		if h.Name == "master-1" {
			want = "eno1.nmconnection"
		}
		if strings.Join(names, ",") != want {
			t.Errorf("%s keyfiles %v, want %q", h.Name, names, want)
			continue
		}
		if want != "" {
			b, _ := os.ReadFile(filepath.Join(dir, want))
			if !strings.Contains(string(b), "interface-name=eno1\n") || strings.Contains(string(b), "enp1s0") {
				t.Errorf("%s keyfile not renamed to the real NIC:\n%s", h.Name, b)
			}
		}
	}
	// Each boot of node zero resumed: the service found the cluster the
	// first boot registered instead of registering another.
	cs, err := c.ListClusters(ctx)
	if err != nil || len(cs) != 1 {
		t.Errorf("clusters after %d boots of node zero: %d %v", zero.runs, len(cs), err)
	}
}
