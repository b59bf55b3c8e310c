package assisted

import (
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// TestHostConfigsInTheService: with the config image's host configs the
// service chooses the installation disk by the root device hints, and says
// as failing validations and events when a host's disks match none of its
// hints or a configured host never registers.
func TestHostConfigsInTheService(t *testing.T) {
	macs := []string{"52:54:00:00:00:0a", "52:54:00:00:00:0b", "52:54:00:00:00:0c"}
	invs := make([]*wire.Inventory, 3)
	for i := range invs {
		invs[i] = masterInv(t, []string{"master-0", "master-1", "master-2"}[i], 10+i)
		for _, nic := range invs[i].Interfaces { // the NIC with the address, which the service keeps
			if len(nic.IPv4Addresses) > 0 {
				nic.MACAddress = strings.ToUpper(macs[i])
				break
			}
		}
	}
	// master-0's hints pick its last eligible disk, not the default first.
	var eligible []*wire.Disk
	for _, d := range invs[0].Disks {
		if d.InstallationEligibility != nil && d.InstallationEligibility.Eligible {
			eligible = append(eligible, d)
		}
	}
	if len(eligible) < 2 {
		t.Fatalf("master-0 tree has %d eligible disks, want 2 or more", len(eligible))
	}
	want := eligible[len(eligible)-1]
	configs := []manifests.HostConfig{
		{Name: "master-0", MACs: []string{macs[0]}, Hints: &manifests.RootDeviceHints{DeviceName: want.Path}},
		{Name: "master-1", MACs: []string{macs[1]}, Hints: &manifests.RootDeviceHints{DeviceName: "/dev/sdz"}},
		{Name: "master-2", MACs: []string{macs[2]}},
		{Name: "worker-9", MACs: []string{"52:54:00:00:00:99"}},
	}
	e := newEnv(t, func(c *Config) { c.HostConfigs = configs; c.HostConfigGrace = 5 * time.Minute })
	clusterID, infraEnvID := e.cluster(nil)
	var ids []string
	for _, inv := range invs {
		ids = append(ids, e.addHost(infraEnvID, inv))
	}

	if h := e.host(infraEnvID, ids[0]); h.InstallationDiskPath != want.Path {
		t.Errorf("master-0 installation disk %s, want %s (its hints)", h.InstallationDiskPath, want.Path)
	}

	id := string(wire.HostValidationIDInstallationDiskMatchesHints)
	h1 := e.host(infraEnvID, ids[1])
	r := resultsByID(t, h1.ValidationsInfo)[id]
	wantMsg := "Host config master-1: " + validation.NoDiskMatchesHints(configs[1].Hints, invs[1])
	if r.Status != wire.ValidationFailure || r.Message != wantMsg {
		t.Errorf("master-1 %s = %s %q, want failure %q", id, r.Status, r.Message, wantMsg)
	}
	if h1.Status == wire.HostStatusKnown {
		t.Errorf("master-1 is known although no disk matches its hints")
	}
	for _, part := range []string{"deviceName=/dev/sdz", "eligible disks: /dev/"} {
		if !strings.Contains(r.Message, part) {
			t.Errorf("message %q does not name %q", r.Message, part)
		}
	}
	evs := e.events(EventsQuery{ClusterID: clusterID})
	if !hasEvent(evs, evHostValFailed, "Host master-1: validation '"+id+"' failed: "+wantMsg) {
		t.Errorf("no event naming master-1's hints and disks; events:\n%s", strings.Join(eventLines(evs), "\n"))
	}
	for _, i := range []int{0, 2} {
		if r := resultsByID(t, e.host(infraEnvID, ids[i]).ValidationsInfo)[id]; r.Status != wire.ValidationSuccess {
			t.Errorf("host %d %s = %s %q, want success", i, id, r.Status, r.Message)
		}
	}

	cid := string(wire.ClusterValidationIDConfiguredHostsRegistered)
	if r := resultsByID(t, e.getCluster(clusterID).ValidationsInfo)[cid]; r.Status != wire.ValidationPending || !strings.Contains(r.Message, "worker-9 (MAC 52:54:00:00:00:99)") {
		t.Errorf("%s within the grace = %s %q, want pending naming worker-9", cid, r.Status, r.Message)
	}
	e.clock.Advance(6 * time.Minute)
	for _, h := range ids {
		e.checkIn(infraEnvID, h) // keep the hosts connected
	}
	if err := e.s.Tick(e.ctx); err != nil {
		t.Fatal(err)
	}
	c := e.getCluster(clusterID)
	r = resultsByID(t, c.ValidationsInfo)[cid]
	if r.Status != wire.ValidationFailure || !strings.Contains(r.Message, "worker-9 (MAC 52:54:00:00:00:99)") {
		t.Errorf("%s past the grace = %s %q, want failure naming worker-9", cid, r.Status, r.Message)
	}
	if c.Status == wire.ClusterStatusReady {
		t.Errorf("cluster ready with a configured host missing")
	}
	evs = e.events(EventsQuery{ClusterID: clusterID})
	if !hasEvent(evs, evClusterValFailed, "Cluster validation '"+cid+"' failed: "+r.Message) {
		t.Errorf("no event for the missing host; events:\n%s", strings.Join(eventLines(evs), "\n"))
	}
}

// TestNoHostConfigsNoExtraValidations: a service without host configs shows
// exactly assisted's validations.
func TestNoHostConfigsNoExtraValidations(t *testing.T) {
	e := newEnv(t)
	clusterID, infraEnvID, hosts := e.readyCluster()
	if _, ok := resultsByID(t, e.host(infraEnvID, hosts[0]).ValidationsInfo)[string(wire.HostValidationIDInstallationDiskMatchesHints)]; ok {
		t.Error("host validations include installation-disk-matches-root-device-hints without host configs")
	}
	if _, ok := resultsByID(t, e.getCluster(clusterID).ValidationsInfo)[string(wire.ClusterValidationIDConfiguredHostsRegistered)]; ok {
		t.Error("cluster validations include configured-hosts-registered without host configs")
	}
}
