package assisted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nodezero/nodezero/daemon/assisted/assistedtest"
	"github.com/nodezero/nodezero/hostagent/inventory"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// Test fixtures: a service on a real store in a temporary directory, driven
// by a clock that moves only when told to, with the monitor off (tests call
// Tick). Inventories come from the committed hardware trees in
// testdata/hw, collected as the agent collects them.

const testPullSecret = `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`

// Addresses of the test hosts: the 192.168.111.0/24 machine network of the
// agent protocol transcript, with its VIPs.
const (
	testMachineNet = "192.168.111.0/24"
	testAPIVIP     = "192.168.111.5"
	testIngressVIP = "192.168.111.4"
)

// fakeClock is a Config.Now that moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// env is one service under test with its store and clock.
type env struct {
	t     testing.TB
	ctx   context.Context
	path  string
	st    *store.Store
	clock *fakeClock
	cfg   Config
	s     *Service
}

// newEnv opens a store in a fresh directory and starts a service on it; both
// are closed when the test ends. mod, when set, adjusts the config.
func newEnv(t testing.TB, mod ...func(*Config)) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), path: filepath.Join(t.TempDir(), "nodezero.db"), clock: newFakeClock()}
	st, err := store.Open(e.ctx, e.path, store.Options{Now: e.clock.Now})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	e.st = st
	e.cfg = Config{Store: st, Now: e.clock.Now, MonitorInterval: -1, ProbeSettle: -1}
	for _, m := range mod {
		m(&e.cfg)
	}
	e.start()
	t.Cleanup(func() {
		if e.s != nil {
			e.s.Close()
		}
		if e.st != nil {
			e.st.Close()
		}
	})
	return e
}

func (e *env) start() {
	e.t.Helper()
	cfg := e.cfg
	cfg.Store = e.st
	s, err := New(cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.s = s
}

// restart closes the service and starts a new one on the same store, as a
// daemon restart does.
func (e *env) restart() {
	e.t.Helper()
	if err := e.s.Close(); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
	e.s = nil
	e.start()
}

// reopen closes the service and the store, opens the file again and starts
// a fresh service on it: only what reached the disk survives.
func (e *env) reopen() {
	e.t.Helper()
	if err := e.s.Close(); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
	e.s = nil
	if err := e.st.Close(); err != nil {
		e.t.Fatalf("store Close: %v", err)
	}
	st, err := store.Open(e.ctx, e.path, store.Options{Now: e.clock.Now})
	if err != nil {
		e.t.Fatalf("store.Open again: %v", err)
	}
	e.st = st
	e.start()
}

// clusterParams are a multi-node cluster's create params with the VIPs of
// the test network.
func clusterParams() *wire.ClusterCreateParams {
	return &wire.ClusterCreateParams{
		Name: "ostest", OpenshiftVersion: "4.18.0", BaseDNSDomain: "example.com",
		PullSecret:  testPullSecret,
		APIVIPs:     []*wire.APIVIP{{IP: testAPIVIP}},
		IngressVIPs: []*wire.IngressVIP{{IP: testIngressVIP}},
	}
}

// cluster registers a cluster (clusterParams when p is nil) and an infra-env
// bound to it, and returns their ids.
func (e *env) cluster(p *wire.ClusterCreateParams) (clusterID, infraEnvID string) {
	e.t.Helper()
	if p == nil {
		p = clusterParams()
	}
	c, err := e.s.RegisterCluster(e.ctx, p)
	if err != nil {
		e.t.Fatalf("RegisterCluster: %v", err)
	}
	ie, err := e.s.RegisterInfraEnv(e.ctx, &wire.InfraEnvCreateParams{Name: "ostest-ie", PullSecret: testPullSecret, ClusterID: &c.ID})
	if err != nil {
		e.t.Fatalf("RegisterInfraEnv: %v", err)
	}
	return c.ID, ie.ID
}

// register registers a new host with a fresh id and returns the id.
func (e *env) register(infraEnvID string) string {
	e.t.Helper()
	id := uuid.NewString()
	if _, err := e.s.RegisterHost(e.ctx, infraEnvID, &wire.HostCreateParams{HostID: id, DiscoveryAgentVersion: "agent:test"}, ""); err != nil {
		e.t.Fatalf("RegisterHost %s: %v", id, err)
	}
	return id
}

// checkIn is an agent's instructions request without long polling; it
// reports the host's clock as the service's.
func (e *env) checkIn(infraEnvID, hostID string) *wire.Steps {
	e.t.Helper()
	steps, err := e.s.NextSteps(e.ctx, infraEnvID, hostID, e.clock.Now().Unix(), 0, "")
	if err != nil {
		e.t.Fatalf("NextSteps %s: %v", hostID, err)
	}
	return steps
}

// postInventory posts inv as an inventory step reply, as the agent does.
func (e *env) postInventory(infraEnvID, hostID string, inv *wire.Inventory) {
	e.t.Helper()
	if err := e.s.PostStepReply(e.ctx, infraEnvID, hostID, inventoryReply(e.t, inv)); err != nil {
		e.t.Fatalf("PostStepReply inventory %s: %v", hostID, err)
	}
}

func inventoryReply(t testing.TB, inv *wire.Inventory) *wire.StepReply {
	t.Helper()
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatalf("marshal inventory: %v", err)
	}
	return &wire.StepReply{StepType: wire.StepTypeInventory, StepID: "inventory-0badc0de", Output: string(b)}
}

// addHost registers a host, checks it in and posts its inventory: what an
// agent does in its first second.
func (e *env) addHost(infraEnvID string, inv *wire.Inventory) string {
	e.t.Helper()
	id := e.register(infraEnvID)
	e.checkIn(infraEnvID, id)
	e.postInventory(infraEnvID, id, inv)
	e.answerChecks(infraEnvID)
	return id
}

func (e *env) host(infraEnvID, hostID string) *wire.Host {
	e.t.Helper()
	h, err := e.s.GetHost(infraEnvID, hostID)
	if err != nil {
		e.t.Fatalf("GetHost %s: %v", hostID, err)
	}
	return h
}

func (e *env) getCluster(id string) *wire.Cluster {
	e.t.Helper()
	c, err := e.s.GetCluster(id)
	if err != nil {
		e.t.Fatalf("GetCluster %s: %v", id, err)
	}
	return c
}

// events returns every event of q, oldest first.
func (e *env) events(q EventsQuery) []*wire.Event {
	e.t.Helper()
	l, err := e.s.ListEvents(e.ctx, q)
	if err != nil {
		e.t.Fatalf("ListEvents: %v", err)
	}
	return l.Events
}

// hasEvent reports whether evs holds an event with this name and message.
func hasEvent(evs []*wire.Event, name, msg string) bool {
	for _, ev := range evs {
		if ev.Name == name && ev.Message == msg {
			return true
		}
	}
	return false
}

func eventLines(evs []*wire.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%s %s: %s", ev.Severity, ev.Name, ev.Message)
	}
	return out
}

// Collected inventories are cached per tree: the trees never change during
// a run.
var (
	hwMu    sync.Mutex
	hwCache = map[string]*wire.Inventory{}
)

// hwInventory collects the inventory of testdata/hw/<tree> as the agent
// would, as host hostname with the one address addr (CIDR), and returns a
// copy the caller may change.
func hwInventory(t testing.TB, tree, hostname, addr string) *wire.Inventory {
	t.Helper()
	hwMu.Lock()
	base, ok := hwCache[tree]
	if !ok {
		inv, err := inventory.Collect(context.Background(), inventory.Options{
			Root: filepath.Join("..", "..", "testdata", "hw", tree), Hostname: "placeholder",
			Addresses: []netip.Prefix{netip.MustParsePrefix("192.168.111.200/24")},
		})
		if err != nil {
			hwMu.Unlock()
			t.Fatalf("collect %s: %v", tree, err)
		}
		base, hwCache[tree] = inv, inv
	}
	hwMu.Unlock()
	inv := cloneJSON(base)
	inv.Hostname = hostname
	p := netip.MustParsePrefix(addr)
	for _, nic := range inv.Interfaces {
		if len(nic.IPv4Addresses) > 0 {
			nic.IPv4Addresses = []string{p.String()}
			break
		}
	}
	return inv
}

// masterInv is a master-class host (testdata/hw/master-0) at 192.168.111.<n>.
func masterInv(t testing.TB, name string, n int) *wire.Inventory {
	return hwInventory(t, "master-0", name, fmt.Sprintf("192.168.111.%d/24", n))
}

// resultsByID reads validations_info into id → result, failing the test on
// any shape other than assisted's category → [{id,status,message}].
func resultsByID(t testing.TB, info string) map[string]wire.Validation {
	t.Helper()
	var groups map[string][]map[string]any
	if err := json.Unmarshal([]byte(info), &groups); err != nil {
		t.Fatalf("validations_info %q is not category → list: %v", info, err)
	}
	out := map[string]wire.Validation{}
	for cat, list := range groups {
		for _, entry := range list {
			if len(entry) != 3 {
				t.Errorf("validations_info[%s] entry %v: got keys %d, want exactly id, status, message", cat, entry, len(entry))
			}
			id, _ := entry["id"].(string)
			st, _ := entry["status"].(string)
			msg, _ := entry["message"].(string)
			if id == "" || st == "" {
				t.Errorf("validations_info[%s] entry %v: missing id or status", cat, entry)
			}
			out[id] = wire.Validation{ID: id, Status: wire.ValidationStatus(st), Message: msg, Category: wire.ValidationCategory(cat)}
		}
	}
	return out
}

// wantKind asserts err is a service error of kind want.
func wantKind(t testing.TB, what string, err error, want Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got no error, want kind %d", what, want)
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("%s: got %T %v, want *Error", what, err, err)
	}
	if se.Kind != want {
		t.Fatalf("%s: got kind %d (%v), want %d", what, se.Kind, err, want)
	}
}

// readyCluster builds a cluster with three master-class hosts that are all
// known, the cluster ready. It returns the ids, hosts in registration order.
func (e *env) readyCluster() (clusterID, infraEnvID string, hosts []string) {
	e.t.Helper()
	clusterID, infraEnvID = e.cluster(nil)
	for i := range 3 {
		hosts = append(hosts, e.addHost(infraEnvID, masterInv(e.t, fmt.Sprintf("master-%d", i), 10+i)))
	}
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusReady {
		e.t.Fatalf("cluster status %s (%s), want ready; validations %s", c.Status, c.StatusInfo, c.ValidationsInfo)
	}
	return clusterID, infraEnvID, hosts
}

const gib = int64(1) << 30

// handInventory is a host built by hand: cores CPUs, ramGiB of memory, one
// HDD of diskGB (decimal) at /dev/sda, eth0 at addr (CIDR) with a default
// route, and a GPU when gpu is set.
func handInventory(name string, cores, ramGiB, diskGB int64, addr string, gpu bool) *wire.Inventory {
	inv := &wire.Inventory{
		Hostname: name,
		CPU:      &wire.CPU{Count: cores, Architecture: "x86_64"},
		Memory:   &wire.Memory{PhysicalBytes: ramGiB * gib, UsableBytes: ramGiB * gib, PhysicalBytesMethod: wire.MemoryMethodGhw},
		Disks: []*wire.Disk{{
			ID: "/dev/disk/by-id/wwn-0x" + name, Name: "sda", Path: "/dev/sda", DriveType: wire.DriveTypeHDD,
			SizeBytes: diskGB * 1000 * 1000 * 1000, HCTL: "0:0:0:0",
			InstallationEligibility: &wire.DiskInstallationEligibility{Eligible: true},
		}},
		Interfaces: []*wire.Interface{{
			Name: "eth0", Type: "physical", MACAddress: "52:54:00:aa:bb:01", IPv4Addresses: []string{addr},
		}},
		Routes: []*wire.Route{
			{Destination: "0.0.0.0", Gateway: "192.168.111.1", Interface: "eth0", Family: 2},
			{Destination: "192.168.111.0", Interface: "eth0", Family: 2},
		},
		SystemVendor: &wire.SystemVendor{Manufacturer: "Red Hat", ProductName: "KVM"},
	}
	if gpu {
		inv.GPUs = []*wire.GPU{{Vendor: "NVIDIA Corporation", VendorID: "10de", DeviceID: "1eb8", Name: "TU104GL [Tesla T4]"}}
	}
	return inv
}

// rewrite stops the service, changes the cluster's rows and its hosts' rows
// in the store the way a later feature would (the install flow drives
// hosts to installing; this build's service cannot yet), and starts a
// service on the result.
func (e *env) rewrite(clusterID string, fc func(*wire.Cluster), fh func(*wire.Host)) {
	e.t.Helper()
	if err := e.s.Close(); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
	e.s = nil
	err := e.st.Update(e.ctx, func(tx *store.Tx) error {
		row, err := tx.Cluster(clusterID)
		if err != nil {
			return err
		}
		var d clusterDoc
		if err := json.Unmarshal(row.Doc, &d); err != nil {
			return err
		}
		fc(&d.Cluster)
		row.Status, row.StatusInfo = string(d.Cluster.Status), d.Cluster.StatusInfo
		if row.Doc, err = json.Marshal(d); err != nil {
			return err
		}
		if err := tx.PutCluster(row); err != nil {
			return err
		}
		hosts, err := tx.Hosts(store.HostFilter{ClusterID: clusterID})
		if err != nil {
			return err
		}
		for _, hr := range hosts {
			var h wire.Host
			if err := json.Unmarshal(hr.Doc, &h); err != nil {
				return err
			}
			fh(&h)
			hr.Status, hr.StatusInfo = string(h.Status), h.StatusInfo
			if hr.Doc, err = json.Marshal(&h); err != nil {
				return err
			}
			if err := tx.PutHost(hr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatalf("rewrite store: %v", err)
	}
	e.start()
}

// pendingSteps returns the ids of the host's pending steps as the store
// holds them.
func (e *env) pendingSteps(infraEnvID, hostID string) []string {
	e.t.Helper()
	var ids []string
	err := e.st.View(e.ctx, func(tx *store.Tx) error {
		steps, err := tx.Steps(infraEnvID, hostID)
		for _, s := range steps {
			ids = append(ids, s.StepID)
		}
		return err
	})
	if err != nil {
		e.t.Fatalf("store steps: %v", err)
	}
	return ids
}

// answerChecks posts, for every host of the infra-env that has sent an
// inventory, what healthy agents on one flat network would answer to the
// host checks: every other host reached at L2 and L3 on each of its
// addresses, and the cluster's names resolved (api and api-int to the API
// VIP, apps names to the ingress VIP, nothing else).
func (e *env) answerChecks(infraEnvID string) {
	e.t.Helper()
	hosts, err := e.s.ListHosts(infraEnvID)
	if err != nil {
		e.t.Fatalf("ListHosts: %v", err)
	}
	invs := map[string]*wire.Inventory{}
	for _, h := range hosts {
		if h.Inventory == "" {
			continue
		}
		var inv wire.Inventory
		if err := json.Unmarshal([]byte(h.Inventory), &inv); err != nil {
			e.t.Fatal(err)
		}
		invs[h.ID] = &inv
	}
	clusters := map[string]*wire.Cluster{}
	for _, h := range hosts {
		self := invs[h.ID]
		if self == nil || len(self.Interfaces) == 0 {
			continue
		}
		e.postCheck(infraEnvID, h.ID, wire.StepTypeConnectivityCheck, assistedtest.Connectivity(self, h.ID, invs))
		e.postCheck(infraEnvID, h.ID, wire.StepTypeNTPSynchronizer, wire.NTPSynchronizationResponse{
			NTPSources: []*wire.NTPSource{{SourceName: "192.168.111.1", SourceState: wire.SourceStateSynced}}})
		if h.ClusterID != nil {
			c := clusters[*h.ClusterID]
			if c == nil {
				// Without its hosts: at a thousand hosts a cluster with
				// them carries every host's connectivity report.
				var err error
				if c, err = e.s.GetClusterExcludingHosts(*h.ClusterID); err != nil {
					e.t.Fatalf("GetClusterExcludingHosts: %v", err)
				}
				clusters[*h.ClusterID] = c
			}
			e.postCheck(infraEnvID, h.ID, wire.StepTypeDomainResolution, assistedtest.Resolutions(c))
		}
	}
}

func (e *env) postCheck(infraEnvID, hostID string, typ wire.StepType, v any) {
	e.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.PostStepReply(e.ctx, infraEnvID, hostID, &wire.StepReply{StepType: typ, StepID: string(typ) + "-0badc0de", Output: string(b)}); err != nil {
		e.t.Fatalf("PostStepReply %s %s: %v", typ, hostID, err)
	}
}
