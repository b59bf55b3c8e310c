package main

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// TestNetnsPreparation: five hosts of a user-managed-networking cluster
// (platform none) in namespaces, its release image on the bed's registry
// over TLS, trusted through the install-config's additionalTrustBundle.
//
//   - The registry stopped: the hosts are known (the checks do not pull),
//     node zero starts the install, the pulls fail, container-images-available
//     fails naming the image and the cluster is ready again; the disks'
//     speed was measured meanwhile.
//   - The api record removed from the bed's DNS: api-domain-name-resolved-
//     correctly fails with the name and the hosts are insufficient; the
//     record back, they are known again with no action.
//   - The registry started and the install retried: every host pulls the
//     image, whole, and is prepared.
func TestNetnsPreparation(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: an install's preparation across network namespaces takes minutes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	n := newNetnsCluster(t, ctx, netnsOptions{Workers: 2, PlatformNone: true, Registry: true})
	n.registry.Stop()
	capture, err := n.bed.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range n.hosts {
		n.attach(h)
	}
	n.zero.extra = []string{"--check-interval", "3s"}
	for _, h := range n.hosts {
		h.boot(t, ctx)
	}
	booted := time.Now()
	c := n.client(t)
	names := []string{"master-0", "master-1", "master-2", "worker-0", "worker-1"}
	val := func(h *wire.Host, id string) [2]string {
		if h == nil || h.ValidationsInfo == "" {
			return [2]string{}
		}
		return validations(t, h.ValidationsInfo)[id]
	}
	cluster := func() *wire.Cluster {
		cs, err := c.ListClusters(ctx)
		if err != nil || len(cs) != 1 {
			return nil
		}
		return cs[0]
	}

	waitFor(t, "the install to start and the pulls to fail with the registry stopped", 4*time.Minute, func() (bool, string) {
		hs, desc := n.hostsNow(t, ctx, c)
		failed := 0
		for _, name := range names {
			if v := val(hs[name], "container-images-available"); v[0] == "failure" && strings.Contains(v[1], n.release) {
				failed++
			}
		}
		cl := cluster()
		return failed > 0 && cl != nil && cl.Status == wire.ClusterStatusReady, fmt.Sprintf("%d pulls failed; cluster %v; %s", failed, cl != nil && cl.Status == wire.ClusterStatusReady, desc)
	})
	// A figure for the closing note, not an assertion: from the last boot
	// to the cluster's first ready (when node zero starts the install).
	if evs, err := c.ListEvents(ctx, wire.EventsQuery{ClusterID: cluster().ID}); err == nil {
		for _, e := range evs {
			if strings.Contains(e.Message, "status of the cluster to ready") {
				t.Logf("last host booted → cluster ready: %v", e.EventTime.Time().Sub(booted).Round(10*time.Millisecond))
				break
			}
		}
	}
	hs, _ := n.hostsNow(t, ctx, c)
	measured := 0
	for _, name := range names {
		h := hs[name]
		disks := validation.ReadHostChecks(h).Disks
		if disks.Unreadable {
			t.Fatalf("%s disks_info %q does not parse", name, h.DisksInfo)
		}
		infos := disks.Value
		if ds := infos[validation.InstallationDiskKey(h)].DiskSpeed; ds != nil && ds.Tested {
			measured++
			// A figure for the note, not an assertion.
			t.Logf("%s: installation disk %s on tmpfs: %d ms (exit %d)", name, validation.InstallationDiskKey(h), ds.SpeedMs, ds.ExitCode)
			if v := val(h, "sufficient-installation-disk-speed"); v[0] != "success" {
				t.Errorf("%s: sufficient-installation-disk-speed %v", name, v)
			}
		}
	}
	if measured == 0 {
		t.Error("no host measured its installation disk during the preparation")
	}

	// The user's DNS loses the api record.
	var rest []testbed.Record
	for _, r := range n.records() {
		if r.Name != "api.netns.nodezero.test" {
			rest = append(rest, r)
		}
	}
	if err := n.dns.SetRecords(rest); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "api-domain-name-resolved-correctly to fail on every host, naming the domain", 2*time.Minute, func() (bool, string) {
		hs, desc := n.hostsNow(t, ctx, c)
		ok := true
		for _, name := range names {
			v := val(hs[name], "api-domain-name-resolved-correctly")
			ok = ok && v[0] == "failure" && strings.Contains(v[1], "api.netns.nodezero.test") && hs[name].Status == wire.HostStatusInsufficient
		}
		return ok, desc
	})
	if err := n.dns.SetRecords(n.records()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every host known again", 2*time.Minute, func() (bool, string) {
		hs, desc := n.hostsNow(t, ctx, c)
		ok := true
		for _, name := range names {
			ok = ok && hs[name] != nil && hs[name].Status == wire.HostStatusKnown
		}
		cl := cluster()
		return ok && cl != nil && cl.Status == wire.ClusterStatusReady, desc
	})

	// The registry back, the user retries.
	if err := n.registry.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cl := cluster()
	if _, err := c.InstallCluster(ctx, cl.ID); err != nil {
		t.Fatalf("retry the install: %v", err)
	}
	waitFor(t, "every host to pull the release image and be prepared", 3*time.Minute, func() (bool, string) {
		hs, desc := n.hostsNow(t, ctx, c)
		ok := true
		for _, name := range names {
			h := hs[name]
			// Prepared hosts go on to install at once (issue #6); these
			// have no payload, so their install may fail: what counts here
			// is that preparation let them through.
			ok = ok && h != nil && slices.Contains([]wire.HostStatus{wire.HostStatusPreparingSuccessful, wire.HostStatusInstalling,
				wire.HostStatusInstallingInProgress, wire.HostStatusInstalled, wire.HostStatusError}, h.Status)
		}
		return ok, desc
	})
	hs, _ = n.hostsNow(t, ctx, c)
	for _, name := range names {
		images := validation.ReadHostChecks(hs[name]).Images
		if images.Unreadable {
			t.Fatalf("%s images_status %q does not parse", name, hs[name].ImagesStatus)
		}
		st := images.Value
		im := st[n.release]
		if im == nil || im.Result != wire.ContainerImageAvailabilityResultSuccess || int64(im.SizeBytes) != n.releaseSize {
			t.Errorf("%s: images_status %s; want %s pulled, %d bytes", name, hs[name].ImagesStatus, n.release, n.releaseSize)
		}
	}

	// Network safety: no NTP source configured, so no NTP at all; DNS to
	// the cluster's server only; connections to the API and the registry
	// only; no DHCP (the hosts are static, the VIPs not DHCP's).
	pkts := capture.Stop()
	n.checkTraffic(t, pkts, capture.Dropped(), trafficPolicy{registry: netip.MustParseAddrPort(n.bed.Gateway.String() + ":5000")})
}
