package assisted

import (
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// The steps the service hands to agents, one row each: the host statuses a
// step goes out in, how its args are built, how its reply is decoded and
// what the service keeps of it. Adding a host check is adding a row (and
// the functions it names: args in checkargs.go, replies in
// checkreplies.go). The rows follow assisted-service's instruction manager
// (docs/reference/assisted-service.md §7.1), limited to the steps this service
// can use; tang-connectivity-check is left out until disk encryption with
// tang is supported.

// stepRow is one step type the service hands out.
type stepRow struct {
	typ wire.StepType
	// in are the host statuses the step is handed out in. Within a
	// status, steps go out in the table's order.
	in []wire.HostStatus
	// once: handed out once per status (install, which runs until the
	// host reboots; logs-gather and stop-installation); else again every
	// StepInterval while the host stays in the status.
	once bool
	// args builds the step's args, or reports that the step has nothing
	// to do for the host now (it is then not handed out). Callers hold
	// the model lock.
	args func(s *Service, h *hostRec) ([]string, bool)
	// hold, when set, says whether the step waits before it is handed
	// out (wait > 0), and whether what it last did is stale (it is then
	// due at once rather than at its interval).
	hold func(s *Service, h *hostRec) (wait time.Duration, stale bool)
	// issued, when set, records what the step was handed out for.
	issued func(s *Service, h *hostRec)
	// bigArgs: the args are not stored with the pending step. Nothing
	// reads a step's args back; connectivity-check's list every other
	// host (150 KB at a thousand hosts), which each issue would write
	// again.
	bigArgs bool
	// reply decodes the agent's reply, before the model lock is taken,
	// into what to do with it under the lock: nil when there is nothing
	// to keep. A reply that is not valid is a 400. Nil: the service
	// reads nothing of the step's replies.
	reply func(s *Service, k hostKey, r *wire.StepReply) (keep func(t *txn, h *hostRec) error, err error)
}

// check makes a row whose reply decodes to a T (ok false: nothing to keep,
// such as the output of a failed step) that keep stores on the host, or on
// its cluster. decode runs before the model lock is taken, keep under it
// inside a txn.
func check[T any](typ wire.StepType, in []wire.HostStatus, args func(*Service, *hostRec) ([]string, bool),
	decode func(s *Service, k hostKey, r *wire.StepReply) (v T, ok bool, err error),
	keep func(t *txn, h *hostRec, v T) error) stepRow {
	return stepRow{typ: typ, in: in, args: args,
		reply: func(s *Service, k hostKey, r *wire.StepReply) (func(*txn, *hostRec) error, error) {
			v, ok, err := decode(s, k, r)
			if err != nil || !ok {
				return nil, err
			}
			return func(t *txn, h *hostRec) error { return keep(t, h, v) }, nil
		}}
}

// The statuses steps are handed out in.
var (
	// discovering: a host without an inventory yet, or whose agent lost
	// touch.
	discovering = []wire.HostStatus{wire.HostStatusDiscovering, wire.HostStatusDisconnected}
	// discovered: a host with an inventory, before install (assisted's
	// known, insufficient and pending-for-input).
	discovered = []wire.HostStatus{wire.HostStatusKnown, wire.HostStatusInsufficient, wire.HostStatusPendingForInput}
	// preparing: while the cluster prepares for installation the VIP
	// leases are renewed, the installation disk's speed measured and the
	// release image pulled; the two checks are handed out once per
	// preparation, again only when their step timed out unanswered.
	preparing = []wire.HostStatus{wire.HostStatusPreparingForInstallation}
	// installing: install runs until the host reboots; the leases are
	// renewed meanwhile, until the cluster's own keepalived takes the
	// VIPs.
	installing = []wire.HostStatus{wire.HostStatusInstalling}
	// failed: logs are gathered once, and the installer stopped.
	failed = []wire.HostStatus{wire.HostStatusError, wire.HostStatusCancelled}
)

// stepRows is the table. Its order is the order of the steps within each
// status: for a discovered host assisted's connectivity-check,
// free-network-addresses, dhcp-lease-allocate, inventory, ntp-synchronizer,
// domain-resolution, verify-vips; while preparing dhcp-lease-allocate,
// then the two preparation checks; while installing install, then
// dhcp-lease-allocate.
var stepRows []stepRow

// The table is made at init: its functions reach the table again
// (stepRowOf, planFor), which a variable's initializer may not.
func init() {
	stepRows = []stepRow{
		settling(check(wire.StepTypeConnectivityCheck, discovered, connectivityStepArgs, (*Service).decodeConnectivity, (*txn).keepConnectivity)),
		check(wire.StepTypeFreeNetworkAddresses, discovered, freeAddressesArgs, decodeOutput[wire.FreeNetworksAddresses], (*txn).keepFreeAddresses),
		{typ: wire.StepTypeInstall, in: installing, once: true, args: (*Service).installArgs, reply: installReply},
		check(wire.StepTypeDHCPLeaseAllocate, concat(discovered, preparing, installing, []wire.HostStatus{wire.HostStatusInstallingInProgress}),
			dhcpArgs, decodeLeases, (*txn).keepLeases),
		check(wire.StepTypeInstallationDiskSpeedCheck, preparing, diskSpeedArgs, decodeDiskSpeed, (*txn).keepDiskSpeed),
		check(wire.StepTypeContainerImageAvailability, preparing, imagesArgs, decodeImages, (*txn).keepImages),
		check(wire.StepTypeInventory, concat(discovering, discovered), inventoryArgs, decodeInventory, (*txn).setInventory),
		check(wire.StepTypeNTPSynchronizer, discovered, ntpArgs, decodeNTP, (*txn).keepNTPSources),
		check(wire.StepTypeDomainResolution, discovered, domainArgs, decodeOutput[wire.DomainResolutionResponse], (*txn).keepDomains),
		check(wire.StepTypeVerifyVIPs, discovered, verifyVIPsArgs, decodeVerifyVIPs, (*txn).keepVIPVerification),
		{typ: wire.StepTypeLogsGather, in: failed, once: true, args: (*Service).logsGatherArgs},
		{typ: wire.StepTypeStopInstallation, in: failed, once: true, args: stopArgs},
	}
}

// settling is row r handed out only once the hosts it probes have
// settled, again at once when they settled on others than it last probed
// (connectivity.go), its args too big to store.
func settling(r stepRow) stepRow {
	r.hold, r.issued, r.bigArgs = (*Service).connectivityWait, (*Service).probedTargets, true
	return r
}

func concat(lists ...[]wire.HostStatus) []wire.HostStatus { return slices.Concat(lists...) }

// planFor returns the rows of the steps a host gets in status st, in
// order.
func planFor(st wire.HostStatus) []*stepRow {
	var out []*stepRow
	for i := range stepRows {
		if slices.Contains(stepRows[i].in, st) {
			out = append(out, &stepRows[i])
		}
	}
	return out
}

// knownSteps are the step types of assisted's swagger (the StepType enum):
// what DISABLED_STEPS may name.
var knownSteps = []wire.StepType{
	wire.StepTypeConnectivityCheck, wire.StepTypeExecute, wire.StepTypeInventory, wire.StepTypeInstall,
	wire.StepTypeFreeNetworkAddresses, wire.StepTypeDHCPLeaseAllocate, wire.StepTypeAPIVIPConnectivityCheck,
	wire.StepTypeTangConnectivityCheck, wire.StepTypeNTPSynchronizer, wire.StepTypeInstallationDiskSpeedCheck,
	wire.StepTypeContainerImageAvailability, wire.StepTypeDomainResolution, wire.StepTypeStopInstallation,
	wire.StepTypeLogsGather, wire.StepTypeNextStepRunner, wire.StepTypeUpgradeAgent,
	wire.StepTypeDownloadBootArtifacts, wire.StepTypeRebootForReclaim, wire.StepTypeVerifyVIPs,
}

// disabledSteps is the set of list's step types; one that is no step type
// is logged and left out, as assisted's instruction manager does.
func disabledSteps(list []wire.StepType, log *slog.Logger) map[wire.StepType]bool {
	out := map[wire.StepType]bool{}
	for _, t := range list {
		if !slices.Contains(knownSteps, t) {
			log.Warn("DISABLED_STEPS: not a step type, ignored", "step_type", string(t))
			continue
		}
		out[t] = true
	}
	return out
}

// stepRowOf returns the row of step type typ; nil for a step the service
// does not hand out.
func stepRowOf(typ wire.StepType) *stepRow {
	for i := range stepRows {
		if stepRows[i].typ == typ {
			return &stepRows[i]
		}
	}
	return nil
}

// oneArg is a step's args made of v as its one JSON arg, the form of every
// step but inventory's (the host id) and stop-installation's (none).
func oneArg(v any) ([]string, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return []string{string(b)}, true
}

func inventoryArgs(_ *Service, h *hostRec) ([]string, bool) { return []string{h.h.ID}, true }

// stopArgs: no args, the agent knows what to stop; once per status.
func stopArgs(_ *Service, h *hostRec) ([]string, bool) {
	return nil, !handedOut(h, wire.StepTypeStopInstallation)
}
