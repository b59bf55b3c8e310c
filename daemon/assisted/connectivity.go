package assisted

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// Connectivity reports. A host's report names every other host of the
// cluster: at a thousand hosts that is 300 KB of JSON per host, 300 MB for
// the cluster, repeated by every agent every minute. The service keeps
// each report compacted to what the validations read
// (validation.ConnReport, a dozen bytes per remote host) and writes its
// text to a row of its own, only when it changes; clients that ask for a
// host's connectivity get the text from there.

// connReply is a decoded connectivity-check output: the report compacted
// (validation.ConnReport), its text as the store keeps it, and the SHA-256
// of the agent's output.
type connReply struct {
	conn *validation.ConnReport
	doc  string
	sum  [32]byte
}

// decodeConnectivity decodes and compacts a connectivity-check output;
// nothing to keep when the host posted the same output last time (or the
// step failed). It runs before the model lock is taken.
func (s *Service) decodeConnectivity(k hostKey, r *wire.StepReply) (connReply, bool, error) {
	if r.ExitCode != 0 {
		return connReply{}, false, nil
	}
	sum := sha256.Sum256([]byte(r.Output))
	same := false
	s.mu.RLock()
	if h := s.hosts[k]; h != nil {
		same = h.conn != nil && h.connSum == sum
	}
	s.mu.RUnlock()
	if same {
		return connReply{}, false, nil
	}
	// The report goes straight to its compact form and the document the
	// store keeps. The API lets only a few large replies in at once
	// (daemon/api postStepReply).
	conn, doc, err := s.val.DecodeConnectivity(s.names, r.Output)
	if err != nil {
		return connReply{}, false, badRequest("output: %s is not valid: %v", r.StepType, err)
	}
	return connReply{conn: conn, doc: doc, sum: sum}, true, nil
}

// keepConnectivity makes r the host's report: compacted in memory, its text
// in the store. The host's own row is not written again (its doc holds no
// report); its validations are re-evaluated.
func (t *txn) keepConnectivity(h *hostRec, r connReply) error {
	h.conn, h.connSum = r.conn, r.sum
	k, doc := h.key(), r.doc
	t.reports = append(t.reports, func(tx *store.Tx) error { return tx.PutHostConnectivity(k.infraEnvID, k.id, doc) })
	t.touchHost(h)
	return nil
}

// HostQuery narrows ListClusterHosts as its query parameters do in
// assisted-service: Role and Status filter (exact match, "" any);
// WithInventory and WithConnectivity keep those two documents, which the
// list otherwise leaves out. free_addresses is never listed.
type HostQuery struct {
	Role                            wire.HostRole
	Status                          wire.HostStatus
	WithInventory, WithConnectivity bool
}

// withConnectivity fills in the connectivity reports of hosts from the
// store: those of f, matched by infra-env and id. It runs after the view
// that made hosts, so the store holds at least what the view showed.
func (s *Service) withConnectivity(hosts []*wire.Host, f store.HostFilter) error {
	if len(hosts) == 0 {
		return nil
	}
	ctx := context.Background()
	if len(hosts) == 1 {
		h := hosts[0]
		return s.store.View(ctx, func(tx *store.Tx) (err error) {
			h.Connectivity, err = tx.HostConnectivityReport(h.InfraEnvID, h.ID)
			return err
		})
	}
	byKey := make(map[hostKey]*wire.Host, len(hosts))
	for _, h := range hosts {
		byKey[hostKey{h.InfraEnvID, h.ID}] = h
	}
	return s.store.View(ctx, func(tx *store.Tx) error {
		reports, err := tx.HostsConnectivity(f)
		if err != nil {
			return err
		}
		for _, r := range reports {
			if h := byKey[hostKey{r.InfraEnvID, r.HostID}]; h != nil {
				h.Connectivity = r.Report
			}
		}
		return nil
	})
}

// Config.ProbeSettle is how long the hosts to probe must stay the same
// before a connectivity check goes out to a long-polling agent. While a cluster's hosts come up, their
// inventories arrive one after another; a check handed out in between
// lists only some of the hosts and must be done again, and at a thousand
// hosts every round is 300 MB of reports. So a host's check waits until
// the set has settled, and a host whose last check probed another count
// checks again as soon as it has. An agent that polls without waiting
// (assisted's own) gets every step of its status each time, as assisted
// hands them out.

// countProbeTargets counts the hosts a connectivity check of c would probe
// (connectivityParams: an inventory, neither discovering nor
// disconnected). When the count moves after it had settled, it wakes the
// agents whose last check probed another count: their held instructions
// requests come back and wait out the settling (takeSteps), and those
// that arrive while it is unsettled wait the same way. Callers hold the
// model lock inside a txn.
func (t *txn) countProbeTargets(c *clusterRec) {
	n := 0
	for _, h := range c.hosts {
		if probeTarget(h) {
			n++
		}
	}
	if n == c.probeTargets {
		return
	}
	now := time.Now()
	settled := now.Sub(c.probeChanged) >= t.s.cfg.ProbeSettle
	c.probeTargets, c.probeChanged = n, now
	if !settled {
		return // the agents woken when it moved wait for it to settle
	}
	for _, h := range c.hosts {
		if _, ok := h.agent.issued[wire.StepTypeConnectivityCheck]; ok && h.agent.probeTargets != n {
			t.wakeHost(h)
		}
	}
}

// probedTargets records the count of probe targets h's connectivity check
// was handed out for (see connectivityWait). Callers hold the model lock.
func (s *Service) probedTargets(h *hostRec) {
	if c := s.clusters[h.clusterID()]; c != nil {
		h.agent.probeTargets = c.probeTargets
	}
}

// connectivityWait returns how long h's connectivity check must wait for
// its cluster's hosts to settle (0: not at all), and whether its last
// check probed another count than the settled one. Callers hold the model
// lock.
func (s *Service) connectivityWait(h *hostRec) (wait time.Duration, stale bool) {
	c := s.clusters[h.clusterID()]
	if c == nil {
		return 0, false
	}
	since := time.Since(c.probeChanged)
	if d := s.cfg.ProbeSettle - since; d > 0 {
		return d, false
	}
	// A host still discovering (registered, its inventory not in yet)
	// will be a probe target soon: when a thousand hosts come up at once,
	// a few inventories come seconds after the rest, and a check handed
	// out before them would have to be done again. So the checks wait for
	// them, up to probeHold times ProbeSettle after the count last moved
	// (a host that never sends one must not hold the others' checks).
	if s.cfg.ProbeSettle > 0 && since < probeHold*s.cfg.ProbeSettle && c.probeTargetsPending() {
		return s.cfg.ProbeSettle / 4, false
	}
	return 0, c.probeTargets != h.agent.probeTargets
}

// probeHold bounds, in ProbeSettles, how long connectivity checks wait for
// hosts still discovering.
const probeHold = 10

// probeTargetsPending: a host of c is still discovering.
func (c *clusterRec) probeTargetsPending() bool {
	for _, h := range c.hosts {
		if h.h.Status == wire.HostStatusDiscovering {
			return true
		}
	}
	return false
}

func probeTarget(h *hostRec) bool {
	return h.inv != nil && h.h.Status != wire.HostStatusDiscovering && h.h.Status != wire.HostStatusDisconnected
}
