package assisted

import (
	"fmt"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// TestCoalescedEvaluation: with an evaluation window, agents' requests
// settle their own host at once and the evaluator brings the cluster (and
// the hosts its aggregates touch) to the same end state as a synchronous
// service: three known masters, a ready cluster, one duplicate hostname
// caught on both hosts.
func TestCoalescedEvaluation(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.EvaluationDelay = 2 * time.Millisecond })
	clusterID, ie := e.cluster(nil)
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, e.addHost(ie, masterInv(t, fmt.Sprintf("master-%d", i), 10+i)))
	}
	waitCluster(t, e, clusterID, func(c *wire.Cluster) bool {
		known := 0
		for _, h := range c.Hosts {
			if h.Status == wire.HostStatusKnown && h.SuggestedRole == wire.HostRoleMaster {
				known++
			}
		}
		return known == 3 && c.Status == wire.ClusterStatusReady
	})
	// A fourth host named like the first: both fail hostname-unique once
	// the evaluator has recounted the names.
	e.addHost(ie, masterInv(t, "master-0", 20))
	waitCluster(t, e, clusterID, func(c *wire.Cluster) bool {
		dup := 0
		for _, h := range c.Hosts {
			if r, ok := resultsByID(t, h.ValidationsInfo)["hostname-unique"]; ok && r.Status == "failure" {
				dup++
			}
		}
		return dup == 2 && c.Status == wire.ClusterStatusInsufficient
	})
	if h := e.host(ie, ids[0]); h.Status != wire.HostStatusInsufficient {
		t.Errorf("first master-0 is %s, want insufficient (duplicate name)", h.Status)
	}
}

func waitCluster(t *testing.T, e *env, id string, ok func(*wire.Cluster) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := e.getCluster(id)
		if ok(c) {
			return
		}
		if time.Now().After(deadline) {
			var s string
			for _, h := range c.Hosts {
				s += fmt.Sprintf("\n  %s %s %s", h.RequestedHostname, h.Status, h.StatusInfo)
			}
			t.Fatalf("cluster is %s (%s)%s", c.Status, c.StatusInfo, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
