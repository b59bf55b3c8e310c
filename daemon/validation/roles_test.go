package validation

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func TestSuggestRoles(t *testing.T) {
	t.Run("3 master-class and 2 worker-class hosts", func(t *testing.T) {
		hosts := testHosts()
		autoAssign(hosts)
		roles, ok := (&Validator{}).SuggestRoles(testCluster(), hosts)
		want := map[string]wire.HostRole{
			"h0": wire.HostRoleMaster, "h1": wire.HostRoleMaster, "h2": wire.HostRoleMaster,
			"h3": wire.HostRoleWorker, "h4": wire.HostRoleWorker,
		}
		if !ok {
			t.Fatal("SuggestRoles() ok = false")
		}
		if diff := cmp.Diff(want, roles); diff != "" {
			t.Errorf("roles mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("by ascending weight", func(t *testing.T) {
		// Four master-class hosts of different weight for three seats: the
		// heaviest (most cores) is left a worker, as in assisted.
		var hosts []HostEntry
		for i, cores := range []int64{32, 8, 16, 12} {
			hosts = append(hosts, HostEntry{
				Host:      testHost(fmt.Sprintf("h%d", i), wire.HostRoleAutoAssign),
				Inventory: testInventory(fmt.Sprintf("n%d", i), cores, 32, fmt.Sprintf("192.168.111.%d/24", 20+i)),
			})
		}
		roles, _ := (&Validator{}).SuggestRoles(testCluster(), hosts)
		want := map[string]wire.HostRole{"h0": wire.HostRoleWorker, "h1": wire.HostRoleMaster, "h2": wire.HostRoleMaster, "h3": wire.HostRoleMaster}
		if diff := cmp.Diff(want, roles); diff != "" {
			t.Errorf("roles mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("explicit masters take seats", func(t *testing.T) {
		hosts := testHosts()
		autoAssign(hosts[1:])
		roles, _ := (&Validator{}).SuggestRoles(testCluster(), hosts)
		if _, has := roles["h0"]; has {
			t.Error("a host with an explicit role got a suggestion")
		}
		if roles["h1"] != wire.HostRoleMaster || roles["h2"] != wire.HostRoleMaster {
			t.Errorf("roles = %v, want h1 and h2 masters", roles)
		}
	})
	t.Run("two-node control plane gets an arbiter", func(t *testing.T) {
		hosts := testHosts()[:4]
		autoAssign(hosts)
		hosts[3].Inventory.CPU.Count = 4 // worker-class RAM, arbiter-sized
		c := testCluster()
		c.ControlPlaneCount = 2
		roles, _ := (&Validator{}).SuggestRoles(c, hosts)
		// h3 (4 cores, 8 GiB) is lighter than h2 and comes first: it is the
		// arbiter and the heavier remaining master-class host a worker.
		want := map[string]wire.HostRole{"h3": wire.HostRoleArbiter, "h0": wire.HostRoleMaster, "h1": wire.HostRoleMaster, "h2": wire.HostRoleWorker}
		if diff := cmp.Diff(want, roles); diff != "" {
			t.Errorf("roles mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("waits for every inventory", func(t *testing.T) {
		hosts := testHosts()
		autoAssign(hosts)
		hosts[4].Inventory = nil
		if roles, ok := (&Validator{}).SuggestRoles(testCluster(), hosts); ok || roles != nil {
			t.Errorf("SuggestRoles() = %v, %v, want nil, false", roles, ok)
		}
	})
	t.Run("GPU hosts last", func(t *testing.T) {
		hosts := testHosts()[:3]
		hosts[0].Inventory.GPUs = []*wire.GPU{{Vendor: "NVIDIA"}}
		hosts[1].Inventory.CPU.Count = 64
		var got []string
		for _, h := range SortHostsForRoles(hosts) {
			got = append(got, h.Host.ID)
		}
		if diff := cmp.Diff([]string{"h2", "h1", "h0"}, got); diff != "" {
			t.Errorf("order mismatch (-want +got):\n%s", diff)
		}
	})
}
