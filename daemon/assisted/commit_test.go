package assisted

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// TestConcurrentAgents: many agents register and post inventories at once;
// their requests share transactions (group commit). Everything the service
// acknowledged is on disk: a fresh service on the reopened file shows the
// same hosts, cluster and events.
func TestConcurrentAgents(t *testing.T) {
	const n = 50
	e := newEnv(t)
	clusterID, ie := e.cluster(nil)

	ids := make([]string, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		ids[i] = uuid.NewString()
		wg.Go(func() {
			resp, err := e.s.RegisterHost(e.ctx, ie, &wire.HostCreateParams{HostID: ids[i], DiscoveryAgentVersion: "agent:test"}, "")
			if err != nil {
				errs <- fmt.Errorf("register %d: %w", i, err)
				return
			}
			if resp.Host.ID != ids[i] || resp.Host.Status != wire.HostStatusDiscovering {
				errs <- fmt.Errorf("register %d: got host %s %s", i, resp.Host.ID, resp.Host.Status)
				return
			}
			if _, err := e.s.NextSteps(e.ctx, ie, ids[i], e.clock.Now().Unix(), 0, ""); err != nil {
				errs <- fmt.Errorf("instructions %d: %w", i, err)
				return
			}
			inv := masterInv(t, fmt.Sprintf("host-%02d", i), 10+i)
			if err := e.s.PostStepReply(e.ctx, ie, ids[i], inventoryReply(t, inv)); err != nil {
				errs <- fmt.Errorf("inventory %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	e.answerChecks(ie)

	before := e.snapshot(clusterID)
	if len(before.Hosts) != n {
		t.Fatalf("cluster has %d hosts, want %d", len(before.Hosts), n)
	}
	masters := 0
	for _, h := range before.Hosts {
		if h.Status != wire.HostStatusKnown || h.Inventory == "" {
			t.Errorf("host %s: %s, inventory %d bytes; want known with an inventory", h.RequestedHostname, h.Status, len(h.Inventory))
		}
		if h.SuggestedRole == wire.HostRoleMaster {
			masters++
		}
	}
	if masters != 3 || before.Cluster.Status != wire.ClusterStatusReady {
		t.Errorf("cluster %s with %d suggested masters, want ready with 3", before.Cluster.Status, masters)
	}

	e.reopen()
	after := e.snapshot(clusterID)
	if diff := cmp.Diff(asJSON(t, before), asJSON(t, after)); diff != "" {
		t.Errorf("state after reopening the store mismatch (-acknowledged +on disk):\n%s", diff)
	}
	// Per host too, from the per-host read path.
	for _, id := range ids {
		if diff := cmp.Diff(asJSON(t, findHost(before.Hosts, id)), asJSON(t, e.host(ie, id))); diff != "" {
			t.Errorf("host %s after reopening mismatch (-acknowledged +on disk):\n%s", id, diff)
		}
	}
}

func findHost(hs []*wire.Host, id string) *wire.Host {
	for _, h := range hs {
		if h.ID == id {
			return h
		}
	}
	return nil
}

// TestFailedCommitReloads: when the store refuses a request's rows, the
// caller gets an internal error and the service reloads its model from the
// store, so it shows what the disk holds, not what the request did.
func TestFailedCommitReloads(t *testing.T) {
	e := newEnv(t)
	clusterID, ie := e.cluster(nil)
	a := e.addHost(ie, masterInv(t, "master-0", 10))

	// Behind the service's back the infra-env goes, and its host with it.
	if err := e.st.Update(e.ctx, func(tx *store.Tx) error { return tx.DeleteInfraEnv(ie) }); err != nil {
		t.Fatalf("delete infra-env in the store: %v", err)
	}
	b := uuid.NewString()
	_, err := e.s.RegisterHost(e.ctx, ie, &wire.HostCreateParams{HostID: b}, "")
	wantKind(t, "RegisterHost whose row the store refuses", err, KindInternal)
	if Message(err) == "" || Message(err) == err.Error() {
		t.Errorf("client message %q should hide the cause %q", Message(err), err)
	}

	if _, err := e.s.GetInfraEnv(ie); KindOf(err) != KindNotFound {
		t.Errorf("GetInfraEnv after the reload: %v, want not found (the store has none)", err)
	}
	for _, id := range []string{a, b} {
		if _, err := e.s.GetHost(ie, id); KindOf(err) != KindNotFound {
			t.Errorf("GetHost %s after the reload: %v, want not found", id, err)
		}
	}
	c := e.getCluster(clusterID)
	if c.TotalHostCount != 0 {
		t.Errorf("cluster after the reload has %d hosts, want 0", c.TotalHostCount)
	}
	evs := e.events(EventsQuery{HostIDs: []string{b}})
	if len(evs) != 0 {
		t.Errorf("events of the failed request were stored: %q", eventLines(evs))
	}
	// The service goes on: a new infra-env takes hosts.
	ie2, err := e.s.RegisterInfraEnv(e.ctx, &wire.InfraEnvCreateParams{Name: "again", PullSecret: testPullSecret, ClusterID: &clusterID})
	if err != nil {
		t.Fatalf("RegisterInfraEnv after the failure: %v", err)
	}
	if id := e.addHost(ie2.ID, masterInv(t, "master-0", 10)); e.host(ie2.ID, id).Inventory == "" {
		t.Errorf("host registered after the failure has no inventory")
	}
}

// TestClosedStore: with the store gone every write fails as an internal
// error.
func TestClosedStore(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.register(ie)
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := e.s.RegisterHost(e.ctx, ie, &wire.HostCreateParams{HostID: uuid.NewString()}, "")
	wantKind(t, "RegisterHost on a closed store", err, KindInternal)
	name := "renamed"
	_, err = e.s.UpdateHost(e.ctx, ie, id, &wire.HostUpdateParams{HostName: &name})
	wantKind(t, "UpdateHost on a closed store", err, KindInternal)
	_, err = e.s.ListEvents(e.ctx, EventsQuery{})
	wantKind(t, "ListEvents on a closed store", err, KindInternal)
}
