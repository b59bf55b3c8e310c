package assisted

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// A host's inventory as it arrives, and what a change of a host's
// addresses asks of its peers' connectivity checks.

// setInventory stores an agent's inventory the way assisted-service does:
// re-marshalled through the typed model (unknown fields dropped), virtual
// interfaces dropped, disk eligibility recomputed, the install disk chosen.
func (t *txn) setInventory(h *hostRec, inv *wire.Inventory) error {
	c := t.s.clusters[h.clusterID()]
	var cl *wire.Cluster
	if c != nil {
		cl = &c.c
	}
	disk := t.s.val.ProcessInventory(cl, &h.h, inv)
	b, err := json.Marshal(inv)
	if err != nil {
		return internal(err, "marshal inventory")
	}
	if string(b) == h.docs.inventory {
		return nil
	}
	addrsChanged := h.inv == nil || !sameAddresses(h.inv, inv)
	h.docs.inventory, h.inv = string(b), inv
	if disk != nil {
		h.h.InstallationDiskID, h.h.InstallationDiskPath = validation.DiskID(disk), validation.DiskPath(disk)
	} else {
		h.h.InstallationDiskID, h.h.InstallationDiskPath = "", ""
	}
	t.putHost(h)
	t.touchHost(h)
	if addrsChanged {
		t.recheckPeers(h)
	}
	return nil
}

// peerRecheckAfter: a host's peers check their connectivity again when its
// addresses appear or change, at once or this long after their last round,
// whichever is later (a registration burst then costs a round every few
// seconds, not one per host).
const peerRecheckAfter = 10 * time.Second

// recheckPeers makes connectivity-check due again for the other hosts of
// h's cluster, so that a new host joins their reports in seconds rather
// than at their next minute's round, and wakes their long polls.
func (t *txn) recheckPeers(h *hostRec) {
	c := t.s.clusters[h.clusterID()]
	if c == nil {
		return
	}
	now := t.s.cfg.Now()
	for _, o := range c.hosts {
		if o == h || o.agent.issued == nil {
			continue
		}
		last, ok := o.agent.issued[wire.StepTypeConnectivityCheck]
		if !ok {
			continue
		}
		// Due peerRecheckAfter after the last round, or now if that has
		// passed: backdate the last round so the step's interval ends then.
		due := last.Add(peerRecheckAfter)
		if due.Before(now) {
			due = now
		}
		if back := due.Add(-t.s.cfg.StepInterval); back.Before(last) {
			o.agent.issued[wire.StepTypeConnectivityCheck] = back
			t.wakeHost(o)
		}
	}
}

// sameAddresses reports whether two inventories list the same interface
// addresses (and MACs), in order.
func sameAddresses(a, b *wire.Inventory) bool {
	if len(a.Interfaces) != len(b.Interfaces) {
		return false
	}
	for i := range a.Interfaces {
		x, y := a.Interfaces[i], b.Interfaces[i]
		if (x == nil) != (y == nil) {
			return false
		}
		if x == nil {
			continue
		}
		if x.MACAddress != y.MACAddress || !slices.Equal(x.IPv4Addresses, y.IPv4Addresses) || !slices.Equal(x.IPv6Addresses, y.IPv6Addresses) {
			return false
		}
	}
	return true
}
