package assisted

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

// stepIDRE is how assisted-service names steps: type, dash, 8 hex digits
// (transcript §1.2).
var stepIDRE = regexp.MustCompile(`^inventory-[0-9a-f]{8}$`)

// discoveryStepTypes are the steps a discovered host of a cluster with
// VIPs gets: free-network-addresses because its /24 is small enough to
// scan; no dhcp-lease-allocate without DHCP VIPs.
var discoveryStepTypes = []wire.StepType{
	wire.StepTypeConnectivityCheck, wire.StepTypeFreeNetworkAddresses, wire.StepTypeInventory,
	wire.StepTypeNTPSynchronizer, wire.StepTypeDomainResolution, wire.StepTypeVerifyVIPs,
}

func stepTypes(s *wire.Steps) []wire.StepType {
	var out []wire.StepType
	for _, st := range s.Instructions {
		out = append(out, st.StepType)
	}
	return out
}

// TestNextStepsPerStatus: without ?wait a request gets the steps of the
// host's status that are due and a poll interval (docs/reference/assisted-service.md §7,
// §7.1, limited to the steps this build's service uses): short while the
// cluster forms (pollSeconds), twice assisted's in a backed-off status.
// The first request in a status gets all of them; one within the agent's
// period gets none (an upstream agent runs every step it is handed, so a
// short period must not repeat the checks); one a step interval later
// gets the repeating ones again, as assisted's every 60 s.
func TestNextStepsPerStatus(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	discovering := e.register(ie)
	small := e.addHost(ie, hwInventory(t, "undersized", "small", "192.168.111.30/24"))

	inventory := []wire.StepType{wire.StepTypeInventory}
	checks := discoveryStepTypes
	// wantNext 0: the cadence of a forming cluster (formingNext).
	check := func(name, id string, wantStatus wire.HostStatus, want []wire.StepType, wantNext int64) {
		t.Helper()
		for i, advance := range []time.Duration{0, 0, time.Minute} {
			e.clock.Advance(advance)
			s := e.checkIn(ie, id)
			want := want
			if i == 1 {
				want = nil // nothing is due yet
			}
			if h := e.host(ie, id); h.Status != wantStatus {
				t.Fatalf("%s: host is %s, want %s", name, h.Status, wantStatus)
			}
			if diff := cmp.Diff(want, stepTypes(s)); diff != "" {
				t.Errorf("%s: instructions mismatch (-want +got):\n%s", name, diff)
			}
			if s.PostStepAction != wire.StepsPostStepActionContinue {
				t.Errorf("%s: post_step_action %q, want continue", name, s.PostStepAction)
			}
			if wantNext == 0 {
				e.wantForming(name, id, s.NextInstructionSeconds, int(e.getCluster(clusterID).TotalHostCount))
			} else if s.NextInstructionSeconds != wantNext {
				t.Errorf("%s: next_instruction_seconds %d, want %d", name, s.NextInstructionSeconds, wantNext)
			}
		}
	}
	check("discovering", discovering, wire.HostStatusDiscovering, inventory, 0)
	check("insufficient", small, wire.HostStatusInsufficient, checks, 0)
	check("known", hosts[0], wire.HostStatusKnown, checks, 0)

	// Remove the two extra hosts so the cluster is ready again, install.
	for _, id := range []string{discovering, small} {
		if err := e.s.DeregisterHost(e.ctx, ie, id); err != nil {
			t.Fatalf("DeregisterHost: %v", err)
		}
	}
	if _, err := e.s.InstallCluster(e.ctx, clusterID); err != nil {
		t.Fatalf("InstallCluster: %v", err)
	}
	// Preparation: the disk speed check once (it is then awaited), no
	// image check for a cluster without a release image.
	if s := e.checkIn(ie, hosts[0]); !cmp.Equal(stepTypes(s), []wire.StepType{wire.StepTypeInstallationDiskSpeedCheck}) {
		t.Errorf("preparing-for-installation: first instructions %v, want the disk speed check", stepTypes(s))
	}
	check("preparing-for-installation", hosts[0], wire.HostStatusPreparingForInstallation, nil, 0)

	// Statuses the install flow reaches, written to the store.
	e.rewrite(clusterID, func(c *wire.Cluster) { c.Status = wire.ClusterStatusError }, func(h *wire.Host) { h.Status = wire.HostStatusError })
	// Once per entering the status, then nothing (logs_test.go).
	if s := e.checkIn(ie, hosts[0]); !cmp.Equal(stepTypes(s), []wire.StepType{wire.StepTypeLogsGather, wire.StepTypeStopInstallation}) {
		t.Errorf("error: first instructions %v, want logs-gather and stop-installation", stepTypes(s))
	}
	check("error", hosts[0], wire.HostStatusError, nil, 120)
}

func TestNextStepsStepIDsAndPendingSteps(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.register(ie)

	seen := map[string]bool{}
	var last string
	for range 3 {
		s := e.checkIn(ie, id)
		e.clock.Advance(time.Minute) // the inventory is due again a step interval later
		if len(s.Instructions) != 1 {
			t.Fatalf("instructions = %+v, want one inventory step", s.Instructions)
		}
		st := s.Instructions[0]
		if !stepIDRE.MatchString(st.StepID) {
			t.Errorf("step id %q does not look like inventory-<8 hex>", st.StepID)
		}
		if seen[st.StepID] {
			t.Errorf("step id %q handed out twice", st.StepID)
		}
		seen[st.StepID] = true
		if diff := cmp.Diff([]string{id}, st.Args); diff != "" {
			t.Errorf("inventory args mismatch (-want +got):\n%s", diff)
		}
		last = st.StepID
		// The agent answers once per type: only the newest is pending.
		if got := e.pendingSteps(ie, id); !cmp.Equal(got, []string{last}) {
			t.Errorf("pending steps in the store = %q, want [%s]", got, last)
		}
	}

	// A late reply with an older id is accepted and stored (transcript §4).
	stale := inventoryReply(t, masterInv(t, "master-0", 10))
	stale.StepID = "inventory-00000000"
	if err := e.s.PostStepReply(e.ctx, ie, id, stale); err != nil {
		t.Fatalf("PostStepReply with a stale step id: %v", err)
	}
	if h := e.host(ie, id); h.Inventory == "" {
		t.Errorf("the stale reply's inventory was not stored")
	}
	if got := e.pendingSteps(ie, id); !cmp.Equal(got, []string{last}) {
		t.Errorf("pending steps after a stale reply = %q, want [%s] still", got, last)
	}

	r := inventoryReply(t, masterInv(t, "master-0", 10))
	r.StepID = last
	if err := e.s.PostStepReply(e.ctx, ie, id, r); err != nil {
		t.Fatalf("PostStepReply: %v", err)
	}
	if got := e.pendingSteps(ie, id); len(got) != 0 {
		t.Errorf("pending steps after the reply = %q, want none", got)
	}
	// Answered twice: still fine.
	if err := e.s.PostStepReply(e.ctx, ie, id, r); err != nil {
		t.Errorf("PostStepReply answered twice: %v", err)
	}
}

// nextSteps runs NextSteps in the background; the result arrives on the
// channel.
type stepsResult struct {
	steps *wire.Steps
	err   error
	took  time.Duration
}

func (e *env) nextStepsAsync(ctx context.Context, ie, id string, wait time.Duration) <-chan stepsResult {
	ch := make(chan stepsResult, 1)
	start := time.Now()
	go func() {
		s, err := e.s.NextSteps(ctx, ie, id, e.clock.Now().Unix(), wait, "")
		ch <- stepsResult{s, err, time.Since(start)}
	}()
	return ch
}

// nextStepsHeld starts a long poll like nextStepsAsync and returns once the
// service holds it, waiting for a step.
func (e *env) nextStepsHeld(ctx context.Context, ie, id string, wait time.Duration) <-chan stepsResult {
	e.t.Helper()
	held := make(chan struct{}, 1)
	e.s.heldHook = func() {
		select {
		case held <- struct{}{}:
		default:
		}
	}
	ch := e.nextStepsAsync(ctx, ie, id, wait)
	select {
	case <-held:
	case r := <-ch:
		e.t.Fatalf("long poll answered before it was held: %+v, %v", r.steps, r.err)
	case <-time.After(10 * time.Second):
		e.t.Fatal("long poll not held after 10s")
	}
	return ch
}

func await(t *testing.T, ch <-chan stepsResult, limit time.Duration) stepsResult {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("NextSteps: %v", r.err)
		}
		return r
	case <-time.After(limit):
		t.Fatalf("NextSteps still blocked after %v", limit)
		return stepsResult{}
	}
}

// TestNextStepsLongPoll: with ?wait a request gets only what is due; when
// nothing is, it is held until the wait ends, then told to ask again at
// once. The service's clock does not move meanwhile: the wait is real time.
func TestNextStepsLongPoll(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.register(ie)
	const wait = 200 * time.Millisecond

	r := await(t, e.nextStepsAsync(e.ctx, ie, id, wait), 10*time.Second)
	if diff := cmp.Diff([]wire.StepType{wire.StepTypeInventory}, stepTypes(r.steps)); diff != "" {
		t.Errorf("first long poll mismatch (-want +got):\n%s", diff)
	}
	if r.steps.NextInstructionSeconds != 0 {
		t.Errorf("long poll next_instruction_seconds = %d, want 0", r.steps.NextInstructionSeconds)
	}

	r = await(t, e.nextStepsAsync(e.ctx, ie, id, wait), 10*time.Second)
	if len(r.steps.Instructions) != 0 || r.steps.NextInstructionSeconds != 0 || r.steps.PostStepAction != wire.StepsPostStepActionContinue {
		t.Errorf("second long poll = %+v, want no instructions, next 0, continue", r.steps)
	}
	if r.took < wait {
		t.Errorf("second long poll returned after %v, want it held for the wait (%v)", r.took, wait)
	}

	// Once the step interval has passed on the service's clock, the
	// repeating inventory is due again.
	e.clock.Advance(60 * time.Second)
	r = await(t, e.nextStepsAsync(e.ctx, ie, id, 30*time.Second), 10*time.Second)
	if diff := cmp.Diff([]wire.StepType{wire.StepTypeInventory}, stepTypes(r.steps)); diff != "" {
		t.Errorf("long poll after the step interval mismatch (-want +got):\n%s", diff)
	}

	// A cancelled request returns at once.
	ctx, cancel := context.WithCancel(e.ctx)
	ch := e.nextStepsAsync(ctx, ie, id, 30*time.Second)
	cancel()
	if r := await(t, ch, 10*time.Second); len(r.steps.Instructions) != 0 {
		t.Errorf("cancelled long poll = %+v, want no instructions", r.steps)
	}
}

// TestNextStepsWakeOnStatusChange: a held request is released as soon as
// the host's status changes, with the new status' steps.
func TestNextStepsWakeOnStatusChange(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.register(ie)
	await(t, e.nextStepsAsync(e.ctx, ie, id, time.Second), 10*time.Second) // takes the inventory step

	const wait = 60 * time.Second
	ch := e.nextStepsHeld(e.ctx, ie, id, wait)
	e.postInventory(ie, id, masterInv(t, "master-0", 10))
	if h := e.host(ie, id); h.Status != wire.HostStatusInsufficient && h.Status != wire.HostStatusKnown {
		t.Fatalf("host after its inventory: %s, want a new status", h.Status)
	}
	r := await(t, ch, wait/2)
	if diff := cmp.Diff(discoveryStepTypes, stepTypes(r.steps)); diff != "" {
		t.Errorf("woken long poll mismatch (-want +got):\n%s", diff)
	}
	if r.took >= wait {
		t.Errorf("woken long poll took %v, want it before its deadline %v", r.took, wait)
	}
}

// TestNextStepsWakeOnDeregister: deregistering a host releases its held
// request, which then fails: the host is gone.
func TestNextStepsWakeOnDeregister(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.register(ie)
	await(t, e.nextStepsAsync(e.ctx, ie, id, time.Second), 10*time.Second)
	ch := e.nextStepsHeld(e.ctx, ie, id, 60*time.Second)
	if err := e.s.DeregisterHost(e.ctx, ie, id); err != nil {
		t.Fatalf("DeregisterHost: %v", err)
	}
	select {
	case r := <-ch:
		if KindOf(r.err) != KindNotFound {
			t.Errorf("held request of a deregistered host: got %v, want not found", r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("held request not released by the deregistration")
	}
}

func TestNextStepsUnknownHost(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	_, err := e.s.NextSteps(e.ctx, ie, "5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e02", 0, 0, "")
	wantKind(t, "NextSteps of an unknown host", err, KindNotFound)
	_, err = e.s.NextSteps(e.ctx, ie, "nope", 0, 0, "")
	wantKind(t, "NextSteps with a bad host id", err, KindBadRequest)
}

// TestNextStepsWaitCappedByDisconnection: a held request is no check-in
// (the service records one when a request arrives or a held one wakes; a
// host whose cable is pulled mid-request must not look connected while its
// request is held), so the wait is capped at a third of the disconnection
// timeout, as assisted's 60 s poll is a third of its 3 m: an agent that is
// there checks in often enough never to look disconnected, in a status with
// no repeating step too, whatever wait it asks for.
func TestNextStepsWaitCappedByDisconnection(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.DisconnectionTimeout = 600 * time.Millisecond })
	_, ie := e.cluster(nil)
	id := e.register(ie)
	await(t, e.nextStepsAsync(e.ctx, ie, id, time.Second), 10*time.Second) // takes the inventory step

	// Nothing is due for a minute on the service's clock; the request
	// asks to be held for a minute and is released after 200 ms.
	r := await(t, e.nextStepsAsync(e.ctx, ie, id, time.Minute), 20*time.Second)
	if len(r.steps.Instructions) != 0 || r.steps.NextInstructionSeconds != 0 {
		t.Errorf("capped long poll = %+v, want no instructions and next 0 (ask again at once)", r.steps)
	}
}

// TestConnectivityCheckWaitsForHostsToSettle: a long-polling agent gets its
// connectivity check only once the hosts to probe have stayed the same for
// Config.ProbeSettle, so the check lists every host that came up with it;
// a host coming up later makes the others check again once the hosts have
// settled, without the step interval passing (the service's clock never
// moves here, so only that rule can hand out a second check).
func TestConnectivityCheckWaitsForHostsToSettle(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ProbeSettle = 2 * time.Second })
	_, ie := e.cluster(nil)
	var ids []string
	up := func() {
		id := e.register(ie)
		await(t, e.nextStepsAsync(e.ctx, ie, id, time.Millisecond), 10*time.Second) // the inventory step
		e.postInventory(ie, id, masterInv(t, fmt.Sprintf("master-%d", len(ids)), 10+len(ids)))
		ids = append(ids, id)
	}
	// checks: the hosts each connectivity check handed to host 0 lists.
	var checks [][]string
	poll := func() {
		r := await(t, e.nextStepsAsync(e.ctx, ie, ids[0], 30*time.Second), 40*time.Second)
		if listed, ok := connectivityListed(t, r.steps); ok {
			slices.Sort(listed)
			checks = append(checks, listed)
		}
	}
	want := func(hosts ...string) []string { return slices.Sorted(slices.Values(hosts)) }

	up()
	up()
	poll() // host 0's discovery checks; a connectivity check now would list host 1 only
	up()
	for len(checks) == 0 {
		poll()
	}
	if diff := cmp.Diff(want(ids[1], ids[2]), checks[0]); diff != "" {
		t.Errorf("host 0's first connectivity check (-want +got):\n%s", diff)
	}
	up()
	for len(checks) == 1 {
		poll()
	}
	if diff := cmp.Diff(want(ids[1], ids[2], ids[3]), checks[1]); diff != "" {
		t.Errorf("host 0's check after host 3 came up (-want +got):\n%s", diff)
	}
}

// TestConnectivityCheckWaitsForRegisteredHosts: a host registered whose
// inventory has not come yet holds the others' connectivity checks, though
// the probed count has been the same for longer than ProbeSettle: the
// first host's check lists the second once its inventory is in, instead of
// going out without it. A host that never sends its inventory holds them
// only so long (probeHold).
func TestConnectivityCheckWaitsForRegisteredHosts(t *testing.T) {
	// The hold is probeHold × ProbeSettle = 5 s: b's inventory, a second
	// in, comes well within it on a loaded machine.
	e := newEnv(t, func(c *Config) { c.ProbeSettle = 500 * time.Millisecond })
	_, ie := e.cluster(nil)
	a := e.register(ie)
	await(t, e.nextStepsAsync(e.ctx, ie, a, time.Millisecond), 10*time.Second)
	e.postInventory(ie, a, masterInv(t, "master-0", 10))
	b := e.register(ie)
	// checks returns the host ids the next connectivity check handed to a
	// lists: in the answer to poll, else in the answers to the polls after.
	checks := func(poll <-chan stepsResult) []string {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if ids, ok := connectivityListed(t, await(t, poll, 20*time.Second).steps); ok {
				return ids
			}
			poll = e.nextStepsAsync(e.ctx, ie, a, 10*time.Second)
		}
		t.Fatal("no connectivity check was handed out")
		return nil
	}
	// b checks in and sends its inventory two ProbeSettles in, within the
	// hold, while a polls all along: without the hold its check would be
	// due ProbeSettle after its own inventory, listing nobody.
	reply := inventoryReply(t, masterInv(t, "master-1", 11))
	posted := make(chan error, 1)
	go func() {
		time.Sleep(2 * e.cfg.ProbeSettle)
		if _, err := e.s.NextSteps(e.ctx, ie, b, e.clock.Now().Unix(), time.Millisecond, ""); err != nil {
			posted <- err
			return
		}
		posted <- e.s.PostStepReply(e.ctx, ie, b, reply)
	}()
	got := checks(e.nextStepsAsync(e.ctx, ie, a, 10*time.Second))
	if err := <-posted; err != nil {
		t.Fatalf("the second host's inventory: %v", err)
	}
	if len(got) != 1 || got[0] != b {
		t.Fatalf("the first host's connectivity check lists %v, want the second host %s", got, b)
	}
	// A third host that registers and never sends an inventory: a checks
	// again once the hold has passed, listing b.
	e.register(ie)
	if got := checks(e.nextStepsAsync(e.ctx, ie, a, 10*time.Second)); len(got) != 1 || got[0] != b {
		t.Fatalf("with a host that sends no inventory, the check lists %v, want %s", got, b)
	}
}

// connectivityListed returns the host ids the connectivity check among
// steps lists, and whether there is one.
func connectivityListed(t *testing.T, steps *wire.Steps) ([]string, bool) {
	t.Helper()
	for _, st := range steps.Instructions {
		if st.StepType != wire.StepTypeConnectivityCheck {
			continue
		}
		var p wire.ConnectivityCheckParams
		if err := wire.DecodeStepArg(st.StepType, st.Args, &p); err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, h := range p {
			ids = append(ids, h.HostID)
		}
		return ids, true
	}
	return nil, false
}

// TestPollSeconds: the interval an agent that does not long-poll is told,
// by host status, cluster status, cluster size and how long the cluster
// has been quiet.
func TestPollSeconds(t *testing.T) {
	const base = 60
	forming := func(h wire.HostStatus, c wire.ClusterStatus, n int) pollFacts {
		return pollFacts{Host: h, Cluster: c, Hosts: n, Quiet: time.Second}
	}
	tests := []struct {
		name string
		f    pollFacts
		base int64
		want int64
	}{
		// Forming: hosts / formingPollRate, within [formingMinSeconds, base].
		{"discovering, one host", forming(wire.HostStatusDiscovering, wire.ClusterStatusPendingForInput, 1), base, formingMinSeconds},
		{"no hosts counted", forming(wire.HostStatusDiscovering, wire.ClusterStatusInsufficient, 0), base, formingMinSeconds},
		{"insufficient, 3 hosts", forming(wire.HostStatusInsufficient, wire.ClusterStatusInsufficient, 3), base, formingMinSeconds},
		{"pending-for-input, 5 hosts", forming(wire.HostStatusPendingForInput, wire.ClusterStatusPendingForInput, 5), base, formingMinSeconds},
		{"known, 100 hosts", forming(wire.HostStatusKnown, wire.ClusterStatusReady, 100), base, 2},
		{"known, 101 hosts", forming(wire.HostStatusKnown, wire.ClusterStatusInsufficient, 101), base, 3},
		{"known, 1,000 hosts", forming(wire.HostStatusKnown, wire.ClusterStatusReady, 1000), base, 20},
		{"preparing, 250 hosts", forming(wire.HostStatusPreparingForInstallation, wire.ClusterStatusPreparingForInstallation, 250), base, 5},
		{"prepared, 3 hosts", forming(wire.HostStatusPreparingSuccessful, wire.ClusterStatusPreparingForInstallation, 3), base, formingMinSeconds},
		{"day 2, known", forming(wire.HostStatusKnown, wire.ClusterStatusAddingHosts, 3), base, formingMinSeconds},
		{"3,000 hosts reach base", forming(wire.HostStatusKnown, wire.ClusterStatusReady, 3000), base, base},
		{"10,000 hosts stay at base", forming(wire.HostStatusDiscovering, wire.ClusterStatusInsufficient, 10000), base, base},
		{"a base under the minimum wins", forming(wire.HostStatusKnown, wire.ClusterStatusReady, 3), 1, 1},
		{"a short base caps", forming(wire.HostStatusKnown, wire.ClusterStatusReady, 1000), 10, 10},
		{"just under quiet", pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: 3, Quiet: formingQuiet - time.Second}, base, formingMinSeconds},

		// Each host in its own second of the period: slot mod period,
		// never sooner than formingMinSeconds.
		{"1,000 hosts, slot 5 at 0", pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: 1000, Slot: 5}, base, 5},
		{"1,000 hosts, slot 5 at 4: the next period's", pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: 1000, Slot: 5, Now: 4}, base, 21},
		{"1,000 hosts, slot 5 at 6", pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: 1000, Slot: 5, Now: 6}, base, 19},
		{"1,000 hosts, slot 25 at 1,700,000,100", pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: 1000, Slot: 25, Now: 1_700_000_100}, base, 5},
		{"1,000 hosts, the largest slot", pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: 1000, Slot: 1<<32 - 1, Now: 1_700_000_000}, base, 15},
		{"3 hosts, slot 1 at 0", pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: 3, Slot: 1}, base, 3},
		{"3 hosts, slot 1 at 1", pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: 3, Slot: 1, Now: 1}, base, 2},
		{"slots do not move base", pollFacts{Host: wire.HostStatusInstalled, Cluster: wire.ClusterStatusInstalled, Hosts: 1000, Slot: 7, Now: 3}, base, base},
		{"slots do not move backed-off", pollFacts{Host: wire.HostStatusDisconnected, Cluster: wire.ClusterStatusInsufficient, Hosts: 1000, Slot: 7, Now: 3}, base, 2 * base},
		{"3,000 hosts: base, on the slot", pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: 3000, Slot: 7, Now: 3}, base, 4},

		// Nothing pending: base.
		{"ready and quiet: waits on a user", pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: 3, Quiet: formingQuiet}, base, base},
		{"insufficient and quiet: waits on a fix", pollFacts{Host: wire.HostStatusInsufficient, Cluster: wire.ClusterStatusInsufficient, Hosts: 100, Quiet: time.Hour}, base, base},
		{"no cluster", pollFacts{Host: wire.HostStatusDiscovering, Hosts: 0}, base, base},
		{"installing", forming(wire.HostStatusInstalling, wire.ClusterStatusInstalling, 3), base, base},
		{"installing-in-progress", forming(wire.HostStatusInstallingInProgress, wire.ClusterStatusInstalling, 3), base, base},
		{"installed", forming(wire.HostStatusInstalled, wire.ClusterStatusInstalled, 3), base, base},
		{"preparing-failed", forming(wire.HostStatusPreparingFailed, wire.ClusterStatusReady, 3), base, base},
		{"known host of an installing cluster", forming(wire.HostStatusKnown, wire.ClusterStatusInstalling, 3), base, base},
		{"known host of an installed cluster", forming(wire.HostStatusKnown, wire.ClusterStatusInstalled, 3), base, base},
		{"known host of a cluster in error", forming(wire.HostStatusKnown, wire.ClusterStatusError, 3), base, base},
		{"known host of a cancelled cluster", forming(wire.HostStatusKnown, wire.ClusterStatusCancelled, 3), base, base},
		{"binding", forming(wire.HostStatusBinding, wire.ClusterStatusInsufficient, 3), base, base},

		// Backed off: twice base, forming or not.
		{"disconnected, forming", forming(wire.HostStatusDisconnected, wire.ClusterStatusInsufficient, 3), base, 2 * base},
		{"error", forming(wire.HostStatusError, wire.ClusterStatusError, 3), base, 2 * base},
		{"cancelled", forming(wire.HostStatusCancelled, wire.ClusterStatusCancelled, 3), base, 2 * base},
		{"resetting-pending-user-action", forming(wire.HostStatusResettingPendingUserAction, wire.ClusterStatusInsufficient, 3), base, 2 * base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pollSeconds(tt.f, tt.base); got != tt.want {
				t.Errorf("pollSeconds(%+v, %d) = %d, want %d", tt.f, tt.base, got, tt.want)
			}
		})
	}
}

// TestPollSecondsBounded: whatever the cluster's size, its agents together
// make at most formingPollRate requests a second — unless they are few (one
// every formingMinSeconds each) or so many that assisted's own base applies
// — and from the second request on, each waits exactly the period, which
// is at most base.
func TestPollSecondsBounded(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 10, 49, 50, 51, 99, 100, 101, 500, 999, 1000, 1001, 2999, 3000, 3001, 5000, 100000} {
		f := pollFacts{Host: wire.HostStatusKnown, Cluster: wire.ClusterStatusReady, Hosts: n, Slot: pollSlot(fmt.Sprint(n)), Now: 1_700_000_000}
		first := pollSeconds(f, 60)
		f.Now += first
		period := pollSeconds(f, 60)
		if rate := float64(n) / float64(period); period > formingMinSeconds && period < 60 && rate > formingPollRate {
			t.Errorf("%d hosts every %d s: %.1f requests a second, want at most %d", n, period, rate, formingPollRate)
		}
		if period < formingMinSeconds || period > 60 {
			t.Errorf("%d hosts: a period of %d s, want within [%d, 60]", n, period, formingMinSeconds)
		}
		f.Now += period
		if again := pollSeconds(f, 60); again != period {
			t.Errorf("%d hosts: waits %d s, then %d, then %d; want the period from the second on", n, first, period, again)
		}
		if first < formingMinSeconds || first >= period+formingMinSeconds {
			t.Errorf("%d hosts: first wait %d s, want [%d, %d)", n, first, formingMinSeconds, period+formingMinSeconds)
		}
	}
}

// TestNextStepsPollCadence: an agent that does not long-poll is told a
// short interval while its cluster forms and assisted's 60 s once nothing
// is pending: the cluster quiet for formingQuiet (waiting on a user to
// start the install), installed. A host registering ends the quiet. A
// long-polling agent is told to ask again at once, as before.
func TestNextStepsPollCadence(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	next := func(what, id string, want int64) {
		t.Helper()
		if got := e.checkIn(ie, id).NextInstructionSeconds; got != want {
			t.Errorf("%s: next_instruction_seconds = %d, want %d", what, got, want)
		}
	}
	forming := func(what, id string, hosts int) {
		t.Helper()
		e.wantForming(what, id, e.checkIn(ie, id).NextInstructionSeconds, hosts)
	}
	forming("known host of a ready cluster that just formed", hosts[0], 3)
	r := await(t, e.nextStepsAsync(e.ctx, ie, hosts[1], time.Millisecond), 10*time.Second)
	if r.steps.NextInstructionSeconds != 0 {
		t.Errorf("long-polling agent of a forming cluster: next_instruction_seconds = %d, want 0", r.steps.NextInstructionSeconds)
	}

	// Ready, nothing changing: the cluster waits on a user. (Check-ins
	// within the disconnection timeout keep the hosts known.)
	for range 10 {
		e.clock.Advance(formingQuiet / 10)
		for _, id := range hosts {
			e.checkIn(ie, id)
		}
	}
	next("known host of a cluster ready for formingQuiet", hosts[0], 60)

	// A host registers: the cluster forms again, for every host of it.
	late := e.register(ie)
	forming("late host, discovering", late, 4)
	forming("known host after a peer registered", hosts[0], 4)
	if err := e.s.DeregisterHost(e.ctx, ie, late); err != nil {
		t.Fatalf("DeregisterHost: %v", err)
	}

	// Installed: nothing pending.
	e.rewrite(clusterID, func(c *wire.Cluster) {
		c.Status, c.StatusInfo, c.StatusUpdatedAt = wire.ClusterStatusInstalled, "Cluster is installed", wire.DateTime(e.clock.Now())
	}, func(h *wire.Host) {
		h.Status, h.StatusInfo, h.StatusUpdatedAt = wire.HostStatusInstalled, "Done", wire.DateTime(e.clock.Now())
	})
	next("installed host", hosts[0], 60)
}

// TestNextStepsPollCadenceScales: the period grows with the cluster's
// hosts, formingPollRate requests a second for all of them, and each host
// is sent to its own second of it.
func TestNextStepsPollCadenceScales(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	const n = 2*formingPollRate + 1 // a 3 s period
	var ids []string
	for range n {
		ids = append(ids, e.register(ie))
	}
	seconds := map[int64]int{}
	for _, id := range ids {
		next := e.checkIn(ie, id).NextInstructionSeconds
		e.wantForming("discovering host", id, next, n)
		seconds[(e.clock.Now().Unix()+next)%3]++
	}
	if len(seconds) != 3 {
		t.Errorf("%d hosts poll next in %d of the period's 3 seconds (%v), want all 3", n, len(seconds), seconds)
	}
}

// wantForming fails unless next is what a host of a forming cluster of n
// hosts is told: a wait of formingMinSeconds or more, less than a period
// more, that ends on the host's own second of the period (the service's
// clock stands still meanwhile).
func (e *env) wantForming(what, id string, next int64, n int) {
	e.t.Helper()
	period := max((int64(n)+formingPollRate-1)/formingPollRate, formingMinSeconds)
	if next < formingMinSeconds || next >= period+formingMinSeconds || (e.clock.Now().Unix()+next)%period != int64(pollSlot(id))%period {
		e.t.Errorf("%s: next_instruction_seconds = %d, want the wait to the host's second (slot %d) of a %d s period, %d s or more",
			what, next, int64(pollSlot(id))%period, period, int64(formingMinSeconds))
	}
}

// TestNextStepsDisabledSteps: a step type in DISABLED_STEPS is never handed
// out, in any status, and the host's other steps still are; a name that is
// no step type is ignored, as assisted's instruction manager does.
func TestNextStepsDisabledSteps(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.DisabledSteps = []wire.StepType{wire.StepTypeFreeNetworkAddresses, wire.StepTypeNTPSynchronizer, "no-such-step"}
	})
	_, ie, hosts := e.readyCluster()
	want := []wire.StepType{
		wire.StepTypeConnectivityCheck, wire.StepTypeInventory, wire.StepTypeDomainResolution, wire.StepTypeVerifyVIPs,
	}
	e.clock.Advance(time.Hour) // every repeating step is due again
	got := stepTypes(e.checkIn(ie, hosts[0]))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("known host's instructions mismatch (-want +got):\n%s", diff)
	}
}
