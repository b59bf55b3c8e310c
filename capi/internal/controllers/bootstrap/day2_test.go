package bootstrap

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	"github.com/nodezero/nodezero/sim/simagent"
	"github.com/nodezero/nodezero/wire"
)

// TestDay2Install: a worker Machine added after the install gets an
// infra-env bound to the control plane's day-2 cluster; once the host a
// simulated agent registers there is known, the reconciler starts its
// install, once.
func TestDay2Install(t *testing.T) {
	e := newEnv(t, withProxy())
	name, dns, ocpID := clusterName, "api.c1.example.com", "6a1b2c3d-0000-4000-8000-0123456789ab"
	day2, err := e.user.ImportCluster(e.ctx, wire.ImportClusterParams{Name: &name, APIVipDnsname: &dns, OpenshiftClusterID: &ocpID, OpenshiftVersion: "4.18"})
	if err != nil {
		t.Fatal(err)
	}
	e.proxy.set(wire.ClusterStatusInstalled)
	cp := e.controlPlane()
	cp.Status.Day2ClusterID = day2.ID
	if err := e.c.Status().Update(e.ctx, cp); err != nil {
		t.Fatal(err)
	}
	e.r.PollInterval = 50 * time.Millisecond
	e.machine("day2-w0", false, bootstrapv1.NodezeroConfigSpec{})
	_, cfg := e.mustReconcile("day2-w0")
	ie, err := e.user.GetInfraEnv(e.ctx, cfg.Status.InfraEnvID)
	if err != nil || ie.ClusterID != day2.ID {
		t.Fatalf("infra-env %+v (%v), want bound to day-2 cluster %s", ie, err, day2.ID)
	}

	h := e.startAgent(ie.ID, 0, simagent.Worker)

	deadline := time.Now().Add(60 * time.Second)
	var last wire.HostStatus
	for {
		res, cfg := e.mustReconcile("day2-w0")
		if cfg.Status.HostID == h.ID {
			host, err := e.user.GetHost(e.ctx, ie.ID, h.ID)
			if err != nil {
				t.Fatal(err)
			}
			last = host.Status
			if !slices.Contains(editable, host.Status) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("host %s never left %q (installs asked: %d)", h.ID, last, e.proxy.hostInstalls())
		}
		time.Sleep(res.RequeueAfter)
	}
	host, _ := e.user.GetHost(e.ctx, ie.ID, h.ID)
	if host.Role != wire.HostRoleWorker || host.RequestedHostname != "day2-w0" {
		t.Errorf("day-2 host role %q hostname %q", host.Role, host.RequestedHostname)
	}
	for range 3 {
		e.mustReconcile("day2-w0")
	}
	if n := e.proxy.hostInstalls(); n != 1 {
		t.Errorf("%d install actions for the host (now %s), want 1", n, last)
	}
}

// startAgent runs a simulated agent registering into infraEnvID with the
// agent token until the test ends; index chooses its address.
func (e *testEnv) startAgent(infraEnvID string, index int, class simagent.Class) simagent.Host {
	e.t.Helper()
	h, err := simagent.NewHost(index, simagent.DefaultNetwork, class)
	if err != nil {
		e.t.Fatal(err)
	}
	api, ingress, _ := simagent.VIPs(simagent.DefaultNetwork)
	agentClient, err := wire.NewClient(e.svc.URL, wire.WithAgentToken(e.svc.AgentToken), wire.WithAgentVersion(simagent.DefaultAgentVersion),
		wire.WithHTTPClient(&http.Client{Transport: &http.Transport{Proxy: nil}}))
	if err != nil {
		e.t.Fatal(err)
	}
	a, err := simagent.New(simagent.Config{Client: agentClient, AgentVersion: simagent.DefaultAgentVersion, InfraEnvID: infraEnvID, Host: h,
		Wait: 2 * time.Second, APIVIP: api, IngressVIP: ingress, RetryInterval: time.Second,
		Install: simagent.InstallConfig{Dir: e.t.TempDir(), Poll: time.Second}})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Run(ctx) }()
	e.t.Cleanup(func() { cancel(); <-done })
	return h
}

// TestRootDeviceHints: the bound host's installation disk is the one its
// config's root device hints choose (the HDD of a host whose first disk
// is an NVMe SSD); hints that no disk matches are shown on HostBound.
func TestRootDeviceHints(t *testing.T) {
	e := newEnv(t)
	rotational := true
	for i, tc := range []struct {
		name     string
		hints    bootstrapv1.RootDeviceHints
		wantDisk string // "": none matches
	}{
		// A master's first disk is an NVMe SSD, its second the HDD sda.
		{"hdd", bootstrapv1.RootDeviceHints{Rotational: &rotational}, "/dev/sda"},
		{"nomatch", bootstrapv1.RootDeviceHints{Model: "no such model"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.machine("cp-"+tc.name, true, bootstrapv1.NodezeroConfigSpec{RootDeviceHints: &tc.hints})
			_, cfg := e.mustReconcile("cp-" + tc.name)
			h := e.startAgent(cfg.Status.InfraEnvID, i, simagent.Master)
			deadline := time.Now().Add(60 * time.Second)
			for {
				res, cfg := e.mustReconcile("cp-" + tc.name)
				host, err := e.user.GetHost(e.ctx, cfg.Status.InfraEnvID, h.ID)
				if err == nil && host.Inventory != "" {
					msg := meta.FindStatusCondition(cfg.Status.Conditions, bootstrapv1.HostBoundCondition).Message
					if tc.wantDisk == "" && strings.Contains(msg, "No eligible disk matches root device hints") {
						break
					}
					if tc.wantDisk != "" && host.InstallationDiskPath == tc.wantDisk {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("host %s: disk %+v, conditions %+v", h.ID, host, cfg.Status.Conditions)
				}
				time.Sleep(res.RequeueAfter / 10) // polling the host's state
			}
		})
	}
}
