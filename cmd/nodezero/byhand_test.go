package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/sandbox"
	"github.com/nodezero/nodezero/wire"
)

// TestByHandToInstalled is the README's "by hand" path run as a new user
// would: the built binary's `nodezero service` and three `nodezero agent`s
// on the committed hardware trees, on loopback. Each round restarts the
// agents, as a host booting its discovery image again does:
//
//  1. without --disks the preparation fails, and the disk speed
//     validation says what to give the agent (not only "exit code -1");
//  2. with --disks but no --payload it fails again, saying the built-in
//     writer has no payload (it passed, and the install failed later);
//  3. with both, the install runs; it is cancelled while the hosts wait
//     to reboot, and reset: the hosts wait for a reboot
//     (resetting-pending-user-action);
//  4. the agents started again register afresh, and the retry installs
//     the cluster: every host installed, the cluster installed.
func TestByHandToInstalled(t *testing.T) {
	needTool(t, "dnsmasq")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	svc := startService(t, dir, freePort(t))
	c, ie := registerCluster(t, ctx, svc)
	payload := filepath.Join(dir, "payload")
	if _, err := sandbox.MakePayload(payload, 8<<20, "registry.example.com:5000/ocp/release:4.18.0"); err != nil {
		t.Fatal(err)
	}
	disks := diskDir(t)
	trees := []string{"master-0", "master-1", "master-2"}
	round := 0
	var agents []*proc
	startAgents := func(extra func(i int) []string) {
		t.Helper()
		for _, p := range agents {
			p.kill()
		}
		agents = nil
		round++
		for i, tree := range trees {
			agents = append(agents, startByHandAgent(t, svc, ie.ID, tree, fmt.Sprintf("127.0.0.%d", 20+i), round, extra(i)))
		}
	}
	get := func() *wire.Cluster {
		t.Helper()
		cl, err := svc.user.GetCluster(ctx, c.ID)
		if err != nil {
			t.Fatalf("get cluster: %v", err)
		}
		return cl
	}
	installWhenReady := func(what string) {
		t.Helper()
		waitFor(t, what+": three known masters and a ready cluster", 2*time.Minute, func() (bool, string) {
			cl := get()
			return cl.Status == wire.ClusterStatusReady, describe(cl)
		})
		if _, err := svc.user.InstallCluster(ctx, c.ID); err != nil {
			t.Fatalf("%s: install: %v\n%s", what, err, describe(get()))
		}
	}
	// preparationFails waits for the preparation to fail on a host and
	// returns its disk speed validation message.
	preparationFails := func(what string) string {
		t.Helper()
		var msg string
		waitFor(t, what+": the preparation to fail on the disk speed check", 2*time.Minute, func() (bool, string) {
			cl := get()
			for _, h := range cl.Hosts {
				if h.ValidationsInfo == "" {
					continue
				}
				if v := validations(t, h.ValidationsInfo)["sufficient-installation-disk-speed"]; v[0] == "failure" {
					msg = v[1]
				}
			}
			return msg != "" && cl.Status != wire.ClusterStatusPreparingForInstallation, describe(cl)
		})
		return msg
	}

	// 1. The README's agents: no --disks, no --payload.
	startAgents(func(int) []string { return nil })
	installWhenReady("round 1")
	if msg := preparationFails("round 1"); !strings.Contains(msg, "give the agent --disks DIR") {
		t.Errorf("round 1: disk speed failure %q does not carry the agent's hint (--disks)", msg)
	}

	// 2. Disks, no payload: the preparation says so.
	startAgents(func(i int) []string { return []string{"--disks", filepath.Join(disks, trees[i])} })
	installWhenReady("round 2")
	if msg := preparationFails("round 2"); !strings.Contains(msg, "give the agent --payload DIR") {
		t.Errorf("round 2: disk speed failure %q does not say the payload is missing", msg)
	}

	// 3. Everything given; the hosts that wrote their disks wait an hour
	// to reboot, so the installation is cancelled mid-way for certain.
	startAgents(func(i int) []string {
		return []string{"--disks", filepath.Join(disks, trees[i]), "--payload", payload, "--reboot-delay", "1h"}
	})
	installWhenReady("round 3")
	waitFor(t, "round 3: a host waiting to reboot", 2*time.Minute, func() (bool, string) {
		cl := get()
		for _, h := range cl.Hosts {
			if h.Progress != nil && h.Progress.CurrentStage == wire.HostStageRebooting {
				return cl.Status == wire.ClusterStatusInstalling, describe(cl)
			}
		}
		return false, describe(cl)
	})
	if cl, err := svc.user.CancelInstallation(ctx, c.ID); err != nil || cl.Status != wire.ClusterStatusCancelled {
		t.Fatalf("cancel: %v (%s)", err, describe(get()))
	}
	cl, err := svc.user.ResetCluster(ctx, c.ID)
	if err != nil {
		t.Fatalf("reset: %v\n%s", err, describe(get()))
	}
	if cl.Status != wire.ClusterStatusInsufficient {
		t.Errorf("cluster after reset: %s, want insufficient", cl.Status)
	}
	for _, h := range cl.Hosts {
		if h.Status != wire.HostStatusResettingPendingUserAction {
			t.Errorf("%s after reset: %s, want resetting-pending-user-action", h.RequestedHostname, h.Status)
		}
	}

	// 4. The hosts boot their discovery image again: the retry installs.
	startAgents(func(i int) []string {
		return []string{"--disks", filepath.Join(disks, trees[i]), "--payload", payload, "--reboot-delay", "1ms"}
	})
	installWhenReady("round 4")
	waitFor(t, "round 4: the cluster installed", 4*time.Minute, func() (bool, string) {
		cl := get()
		return cl.Status == wire.ClusterStatusInstalled, describe(cl)
	})
	for _, h := range get().Hosts {
		if h.Status != wire.HostStatusInstalled {
			t.Errorf("%s: %s, want installed", h.RequestedHostname, h.Status)
		}
	}
	for i, p := range agents {
		if out := p.output(); !strings.Contains(out, "installed disk verified") {
			t.Errorf("%s never booted its written disk:\n%s", trees[i], out)
		}
	}
}

// diskDir is where the hosts' stand-in disks go: tmpfs when the machine
// has it (the disk speed check measures fdatasync, and a loaded test
// machine's own disk can miss etcd's 10 ms), removed at the end.
func diskDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "nodezero-byhand-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startByHandAgent runs `nodezero agent` as the README's by-hand path
// does, with extra flags.
func startByHandAgent(t *testing.T, s *service, ie, tree, addr string, round int, extra []string) *proc {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "hw", tree))
	if err != nil {
		t.Fatal(err)
	}
	if s.dns == "" {
		s.dns = loopbackDNS(t)
	}
	args := append([]string{"agent", "--url", "http://" + s.addr, "--infra-env-id", ie, "--root", root,
		"--host-address", addr + "/8", "--hostname", tree, "--interval", "1", "--log-level", "debug",
		"--dns-server", s.dns}, extra...)
	return start(t, filepath.Join(s.dir, fmt.Sprintf("agent-%s-%d.log", tree, round)), []string{"PULL_SECRET_TOKEN=" + s.token["agent"]}, args...)
}
