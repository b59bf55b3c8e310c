package assisted

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// storedHost is the host's row as the store holds it.
func (e *env) storedHost(infraEnvID, hostID string) store.Host {
	e.t.Helper()
	var h store.Host
	err := e.st.View(e.ctx, func(tx *store.Tx) error {
		var err error
		h, err = tx.Host(infraEnvID, hostID)
		return err
	})
	if err != nil {
		e.t.Fatalf("store host: %v", err)
	}
	return h
}

func (e *env) eventCount() int {
	e.t.Helper()
	l, err := e.s.ListEvents(e.ctx, EventsQuery{})
	if err != nil {
		e.t.Fatalf("ListEvents: %v", err)
	}
	return l.Total
}

// TestStepReplyFailedStep: a reply with a non-zero exit code stores nothing
// (the agent's failing ntp and free-addresses replies, transcript §3).
func TestStepReplyFailedStep(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.register(ie)
	before, events := e.storedHost(ie, id), e.eventCount()
	e.clock.Advance(time.Minute)
	for _, r := range []*wire.StepReply{
		{StepType: wire.StepTypeInventory, StepID: "inventory-1badf00d", ExitCode: 255, Error: "boom"},
		{StepType: wire.StepTypeInventory, StepID: "inventory-2badf00d", ExitCode: -1, Output: "{not json", Error: "boom"},
		{StepType: wire.StepTypeNTPSynchronizer, StepID: "ntp-synchronizer-7f46163a", ExitCode: -1, Error: "chronyc exited with non-zero exit code 127"},
	} {
		if err := e.s.PostStepReply(e.ctx, ie, id, r); err != nil {
			t.Errorf("PostStepReply exit %d: %v, want accepted", r.ExitCode, err)
		}
	}
	if diff := cmp.Diff(before, e.storedHost(ie, id)); diff != "" {
		t.Errorf("failed replies changed the stored host (-before +after):\n%s", diff)
	}
	if n := e.eventCount(); n != events {
		t.Errorf("failed replies wrote %d events", n-events)
	}
	if h := e.host(ie, id); h.Status != wire.HostStatusDiscovering || h.Inventory != "" {
		t.Errorf("host after failed replies: %s with %d bytes of inventory, want discovering without", h.Status, len(h.Inventory))
	}
}

// TestStepReplyInventoryRemarshalled: the inventory is stored as the typed
// model marshals it, so fields the model does not know are dropped
// (docs/reference/assisted-service.md §7).
func TestStepReplyInventoryRemarshalled(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.register(ie)
	b, err := json.Marshal(masterInv(t, "master-0", 10))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	raw["future_field"] = map[string]any{"x": 1}
	raw["disks"].([]any)[0].(map[string]any)["future_disk_field"] = "y"
	b, _ = json.Marshal(raw)
	if err := e.s.PostStepReply(e.ctx, ie, id, &wire.StepReply{StepType: wire.StepTypeInventory, StepID: "inventory-12345678", Output: string(b)}); err != nil {
		t.Fatalf("PostStepReply: %v", err)
	}
	h := e.host(ie, id)
	if strings.Contains(h.Inventory, "future_") {
		t.Errorf("stored inventory kept unknown fields: %s", h.Inventory)
	}
	var stored wire.Inventory
	if err := json.Unmarshal([]byte(h.Inventory), &stored); err != nil {
		t.Fatalf("stored inventory does not parse: %v", err)
	}
	if stored.Hostname != "master-0" || stored.CPU == nil || stored.CPU.Count != 8 || len(stored.Disks) != 2 {
		t.Errorf("stored inventory lost known fields: hostname %q cpu %+v disks %d", stored.Hostname, stored.CPU, len(stored.Disks))
	}
	if h.RequestedHostname != "master-0" {
		t.Errorf("requested_hostname = %q, want the inventory's master-0", h.RequestedHostname)
	}
}

func TestStepReplyBadRequest(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.register(ie)
	cases := []struct {
		name string
		r    *wire.StepReply
	}{
		{"no body", nil},
		{"no step type", &wire.StepReply{StepID: "inventory-12345678", Output: "{}"}},
		{"inventory not json", &wire.StepReply{StepType: wire.StepTypeInventory, StepID: "inventory-12345678", Output: "{\"cpu\":"}},
		{"inventory not an object", &wire.StepReply{StepType: wire.StepTypeInventory, StepID: "inventory-12345678", Output: "[1,2]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantKind(t, "PostStepReply", e.s.PostStepReply(e.ctx, ie, id, tc.r), KindBadRequest)
		})
	}
	if h := e.host(ie, id); h.Inventory != "" {
		t.Errorf("a refused reply stored an inventory")
	}
	err := e.s.PostStepReply(e.ctx, ie, "5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e02", inventoryReply(t, masterInv(t, "x", 10)))
	wantKind(t, "PostStepReply of an unknown host", err, KindNotFound)
}

// TestStepReplyDiskEligibility: the service recomputes disk eligibility
// against its own requirements and chooses the installation disk.
func TestStepReplyDiskEligibility(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.register(ie)
	inv := masterInv(t, "master-0", 10)
	var sda, nvme *wire.Disk
	for _, d := range inv.Disks {
		switch d.Name {
		case "sda":
			sda = d
		case "nvme0n1":
			nvme = d
		}
	}
	if sda == nil || nvme == nil {
		t.Fatalf("master-0 tree: want disks sda and nvme0n1, got %+v", inv.Disks)
	}
	// The agent says sda is fine, but 10 GB is short of the 100 GB a
	// master needs.
	sda.SizeBytes = 10 * 1000 * 1000 * 1000
	sda.InstallationEligibility = &wire.DiskInstallationEligibility{Eligible: true}
	e.postInventory(ie, id, inv)

	h := e.host(ie, id)
	var stored wire.Inventory
	if err := json.Unmarshal([]byte(h.Inventory), &stored); err != nil {
		t.Fatal(err)
	}
	for _, d := range stored.Disks {
		el := d.InstallationEligibility
		switch d.Name {
		case "sda":
			want := &wire.DiskInstallationEligibility{NotEligibleReasons: []string{"Disk is too small (disk only has 10 GB, but 100 GB are required)"}}
			if diff := cmp.Diff(want, el); diff != "" {
				t.Errorf("sda eligibility mismatch (-want +got):\n%s", diff)
			}
		case "nvme0n1":
			if el == nil || !el.Eligible {
				t.Errorf("nvme0n1 eligibility %+v, want eligible", el)
			}
		}
	}
	if h.InstallationDiskID != nvme.ID || h.InstallationDiskPath != "/dev/nvme0n1" {
		t.Errorf("installation disk %q (%s), want %q (/dev/nvme0n1)", h.InstallationDiskID, h.InstallationDiskPath, nvme.ID)
	}

	// With sda whole again, the choice stays where it is (the current
	// choice wins while eligible).
	e.postInventory(ie, id, masterInv(t, "master-0", 10))
	if h := e.host(ie, id); h.InstallationDiskID != nvme.ID {
		t.Errorf("installation disk after sda became eligible: %q, want it kept at %q", h.InstallationDiskID, nvme.ID)
	}
}

// TestStepReplySameInventory: the agent re-sends its inventory after a
// failed poll (transcript §4); an unchanged inventory writes nothing.
func TestStepReplySameInventory(t *testing.T) {
	e := newEnv(t)
	_, ie, hosts := e.readyCluster()
	id := hosts[0]
	before, events := e.storedHost(ie, id), e.eventCount()
	e.clock.Advance(time.Minute)
	e.postInventory(ie, id, masterInv(t, "master-0", 10))
	if diff := cmp.Diff(before, e.storedHost(ie, id)); diff != "" {
		t.Errorf("the same inventory again changed the stored host (-before +after):\n%s", diff)
	}
	if n := e.eventCount(); n != events {
		t.Errorf("the same inventory again wrote %d events", n-events)
	}
}
