package assisted

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nodezero/nodezero/wire"
)

const benchHosts = 1000

// benchAgents is how many agents talk to the service at once: a 1,000-host
// install boots its hosts in waves, not one by one.
const benchAgents = 64

// benchReplies are the inventory replies of benchHosts master-class hosts
// with distinct names and addresses in 10.0.0.0/16.
func benchReplies(b *testing.B) []*wire.StepReply {
	b.Helper()
	out := make([]*wire.StepReply, benchHosts)
	for i := range out {
		inv := hwInventory(b, "master-0", fmt.Sprintf("host-%04d", i), fmt.Sprintf("10.0.%d.%d/16", i/250, 1+i%250))
		for _, r := range inv.Routes {
			if r.Destination == "192.168.111.0" {
				r.Destination = "10.0.0.0"
			}
		}
		out[i] = inventoryReply(b, inv)
	}
	return out
}

func benchClusterParams() *wire.ClusterCreateParams {
	p := clusterParams()
	p.APIVIPs = []*wire.APIVIP{{IP: "10.0.255.5"}}
	p.IngressVIPs = []*wire.IngressVIP{{IP: "10.0.255.4"}}
	return p
}

// addHosts registers benchHosts hosts and posts their inventories, with
// benchAgents agents at a time.
func (e *env) addHosts(b *testing.B, ie string, replies []*wire.StepReply) []string {
	b.Helper()
	ids := make([]string, len(replies))
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range benchAgents {
		wg.Go(func() {
			for i := range work {
				if _, err := e.s.RegisterHost(e.ctx, ie, &wire.HostCreateParams{HostID: ids[i]}, "agent:bench"); err != nil {
					b.Errorf("RegisterHost: %v", err)
					return
				}
				if err := e.s.PostStepReply(e.ctx, ie, ids[i], replies[i]); err != nil {
					b.Errorf("PostStepReply: %v", err)
					return
				}
			}
		})
	}
	for i := range ids {
		work <- i
	}
	close(work)
	wg.Wait()
	return ids
}

// BenchmarkRegisterAndInventory1000: 1,000 hosts register and post their
// inventory into one cluster through the service methods, 64 at a time,
// each request answered once durable. ns/host is the cost per host.
func BenchmarkRegisterAndInventory1000(b *testing.B) {
	replies := benchReplies(b)
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		e := newEnv(b)
		_, ie := e.cluster(benchClusterParams())
		b.StartTimer()
		start := time.Now()
		e.addHosts(b, ie, replies)
		total += time.Since(start)
		b.StopTimer()
		e.s.Close()
		e.st.Close()
		e.s, e.st = nil, nil
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*benchHosts), "ns/host")
}

// BenchmarkTick1000: one monitor tick over a cluster of 1,000 known hosts
// in which nothing changes: the cost of re-evaluating every host and the
// cluster. The hosts have answered their checks (connectivity, NTP, DNS):
// without them none is known.
func BenchmarkTick1000(b *testing.B) {
	// Cluster-wide evaluation coalesced as in production: the setup's
	// thousand connectivity reports would otherwise each re-evaluate the
	// cluster.
	e := newEnv(b, func(c *Config) { c.EvaluationDelay = 20 * time.Millisecond })
	clusterID, ie := e.cluster(benchClusterParams())
	ids := e.addHosts(b, ie, benchReplies(b))
	e.answerChecks(ie)
	for _, id := range ids {
		e.checkIn(ie, id)
	}
	if err := e.s.Tick(e.ctx); err != nil {
		b.Fatal(err)
	}
	c := e.getCluster(clusterID)
	if c.ReadyHostCount != benchHosts {
		b.Fatalf("cluster %s with %d of %d hosts known", c.Status, c.ReadyHostCount, benchHosts)
	}
	for b.Loop() {
		if err := e.s.Tick(e.ctx); err != nil {
			b.Fatal(err)
		}
	}
}
