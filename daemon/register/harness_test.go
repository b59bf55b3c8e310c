package register

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/assisted/assistedtest"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// The tests run against the real service: a SQLite store in a temp dir,
// the embedded assisted service with its monitor off, and the API with
// token checks, over loopback HTTP.

const testPullSecret = `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`

const testSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx5rJmS7r9Vw1q0J9l2o4xS9p0x user@example"

type service struct {
	user  *wire.Client // the user token: what node zero's registration uses
	agent *wire.Client // the agent token: what hosts use

	url, userToken string // where it listens, and the user token
}

func newService(t *testing.T) *service {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "nodezero.db"), store.Options{})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	svc, err := assisted.New(assisted.Config{Store: st, MonitorInterval: -1, MaxWait: time.Millisecond})
	if err != nil {
		st.Close()
		t.Fatalf("assisted.New: %v", err)
	}
	key, err := auth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Service: svc, Verifier: auth.NewVerifier(&key.PublicKey, nil)}))
	t.Cleanup(func() {
		srv.Close()
		svc.Close()
		st.Close()
	})
	client := func(s auth.Scheme, opt func(string) wire.ClientOption) *wire.Client {
		tok, err := auth.Sign(key, s, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := wire.NewClient(srv.URL, opt(tok), wire.WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	userToken, err := auth.Sign(key, auth.User, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return &service{user: client(auth.User, wire.WithUserToken), agent: client(auth.Agent, wire.WithAgentToken), url: srv.URL, userToken: userToken}
}

// addHost registers a host with inventory inv and posts the inventory, as
// an agent does in its first second; it returns the host id.
func (s *service) addHost(t *testing.T, infraEnvID string, inv *wire.Inventory) string {
	t.Helper()
	ctx := context.Background()
	id := uuid.NewString()
	if _, err := s.agent.RegisterHost(ctx, infraEnvID, wire.HostCreateParams{HostID: id, DiscoveryAgentVersion: "agent:test"}); err != nil {
		t.Fatalf("RegisterHost: %v", err)
	}
	if _, err := s.agent.NextSteps(ctx, infraEnvID, id, time.Now().Unix(), 0); err != nil {
		t.Fatalf("NextSteps: %v", err)
	}
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	reply := wire.StepReply{StepType: wire.StepTypeInventory, StepID: "inventory-0badc0de", Output: string(b)}
	if err := s.agent.PostStepReply(ctx, infraEnvID, id, reply); err != nil {
		t.Fatalf("PostStepReply inventory: %v", err)
	}
	s.answerChecks(t, infraEnvID, id)
	return id
}

// answerChecks has every host of the infra-env answer the host checks as
// healthy agents on one network would.
func (s *service) answerChecks(t *testing.T, infraEnvID, hostID string) {
	t.Helper()
	ctx := context.Background()
	h, err := s.user.GetHost(ctx, infraEnvID, hostID)
	if err != nil {
		t.Fatal(err)
	}
	var c *wire.Cluster
	if h.ClusterID != nil {
		if c, err = s.user.GetCluster(ctx, *h.ClusterID); err != nil {
			t.Fatal(err)
		}
	}
	if err := assistedtest.AnswerChecks(ctx, s.user, s.agent, infraEnvID, c); err != nil {
		t.Fatalf("answer host checks: %v", err)
	}
}

const gb = int64(1000 * 1000 * 1000)

// inventory is a host fit to be a master, with four disks: sda a 120 GB
// SSD, sdb a 500 GB HDD, nvme0n1 a 1 TB NVMe disk and sdc a 20 GB disk too
// small to install on.
func inventory(name, mac string, n int) *wire.Inventory {
	disk := func(name, model, vendor, serial, hctl, wwn string, size int64, dt wire.DriveType) *wire.Disk {
		return &wire.Disk{
			ID: "/dev/disk/by-id/wwn-" + wwn, Name: name, Path: "/dev/" + name, ByID: "/dev/disk/by-id/wwn-" + wwn,
			ByPath: "/dev/disk/by-path/pci-0000:00:1f.2-ata-" + name, HCTL: hctl, Model: model, Vendor: vendor,
			Serial: serial, WWN: wwn, SizeBytes: size, DriveType: dt,
			InstallationEligibility: &wire.DiskInstallationEligibility{Eligible: true},
		}
	}
	return &wire.Inventory{
		Hostname: name,
		CPU:      &wire.CPU{Count: 8, Architecture: "x86_64"},
		Memory:   &wire.Memory{PhysicalBytes: 32 << 30, UsableBytes: 32 << 30, PhysicalBytesMethod: wire.MemoryMethodGhw},
		Disks: []*wire.Disk{
			disk("sda", "Samsung SSD 870", "ATA", "S1"+strconv.Itoa(n), "0:0:0:0", "0x5000000000000a0"+strconv.Itoa(n), 120*gb, wire.DriveTypeSSD),
			disk("sdb", "ST500DM002", "ATA", "Z1"+strconv.Itoa(n), "1:0:0:0", "0x5000000000000b0"+strconv.Itoa(n), 500*gb, wire.DriveTypeHDD),
			disk("nvme0n1", "Dell Ent NVMe P5600", "", "N1"+strconv.Itoa(n), "", "0x5000000000000c0"+strconv.Itoa(n), 1000*gb, wire.DriveTypeSSD),
			disk("sdc", "QEMU HARDDISK", "QEMU", "Q1"+strconv.Itoa(n), "2:0:0:0", "0x5000000000000d0"+strconv.Itoa(n), 20*gb, wire.DriveTypeHDD),
		},
		Interfaces: []*wire.Interface{{
			Name: "eth0", Type: "physical", MACAddress: mac, IPv4Addresses: []string{"192.168.111." + strconv.Itoa(80+n) + "/24"},
		}},
		Routes: []*wire.Route{
			{Destination: "0.0.0.0", Gateway: "192.168.111.1", Interface: "eth0", Family: 2},
			{Destination: "192.168.111.0", Interface: "eth0", Family: 2},
		},
		SystemVendor: &wire.SystemVendor{Manufacturer: "Red Hat", ProductName: "KVM"},
	}
}

// manifestSet generates the manifests of spec, writes them and loads them
// back, as node zero reads what the config image carried.
func manifestSet(t *testing.T, spec manifests.Spec) *manifests.Set {
	t.Helper()
	set, err := manifests.Generate(spec)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	dir := t.TempDir()
	if err := manifests.Write(dir, set); err != nil {
		t.Fatalf("Write: %v", err)
	}
	loaded, err := manifests.Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return loaded
}

func nmstate(mac, addr string, prefix int) string {
	return "interfaces:\n- name: eth0\n  type: ethernet\n  state: up\n  mac-address: " + mac +
		"\n  ipv4:\n    enabled: true\n    dhcp: false\n    address:\n    - ip: " + addr +
		"\n      prefix-length: " + strconv.Itoa(prefix) + "\n"
}

func macOf(n int) string { return "52:54:00:aa:bb:0" + strconv.Itoa(n) }

// compactSpec is three control-plane hosts on baremetal with static
// networking, a proxy and NTP sources.
func compactSpec() manifests.Spec {
	s := manifests.Spec{
		ClusterName: "ostest", BaseDomain: "test.metalkube.org",
		ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", Version: "4.18.0",
		ControlPlaneAgents: 3, PlatformType: "baremetal",
		APIVIPs: []string{"192.168.111.5"}, IngressVIPs: []string{"192.168.111.4"},
		ClusterNetworks: []manifests.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
		ServiceNetworks: []string{"172.30.0.0/16"}, MachineNetworks: []string{"192.168.111.0/24"},
		SSHKey: testSSHKey, PullSecret: testPullSecret, CPUArchitecture: "amd64",
		Proxy:                  &manifests.Proxy{HTTPProxy: "http://192.168.111.1:8215", NoProxy: ".example.com"},
		RendezvousIP:           "192.168.111.80",
		AdditionalNTPSources:   []string{"0.rhel.pool.ntp.org", "192.168.111.1"},
		InstallConfigOverrides: `{"fips":true}`,
		ExtraManifests:         []manifests.ExtraManifest{{Name: "99-extra.yaml", Data: []byte("kind: ConfigMap\n")}},
	}
	for i := range 3 {
		s.Hosts = append(s.Hosts, manifests.Host{
			Hostname: "master-" + strconv.Itoa(i), Role: "master",
			Interfaces:    []manifests.Interface{{Name: "eth0", MACAddress: macOf(i)}},
			NetworkConfig: nmstate(macOf(i), "192.168.111."+strconv.Itoa(80+i), 24),
		})
	}
	return s
}

func snoSpec() manifests.Spec {
	return manifests.Spec{
		ClusterName: "sno", BaseDomain: "example.com",
		ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", Version: "4.18.0",
		ControlPlaneAgents: 1, PlatformType: "none",
		ClusterNetworks: []manifests.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
		ServiceNetworks: []string{"172.30.0.0/16"}, MachineNetworks: []string{"192.168.111.0/24"},
		SSHKey: testSSHKey, PullSecret: testPullSecret,
	}
}

func ipv6Spec() manifests.Spec {
	return manifests.Spec{
		ClusterName: "v6", BaseDomain: "example.com",
		ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", Version: "4.18.0",
		ControlPlaneAgents: 3, WorkerAgents: 2, PlatformType: "baremetal",
		APIVIPs: []string{"fd2e:6f44:5dd8:c956::5"}, IngressVIPs: []string{"fd2e:6f44:5dd8:c956::4"},
		ClusterNetworks: []manifests.ClusterNetworkEntry{{CIDR: "fd01::/48", HostPrefix: 64}},
		ServiceNetworks: []string{"fd02::/112"}, MachineNetworks: []string{"fd2e:6f44:5dd8:c956::/120"},
		SSHKey: testSSHKey, PullSecret: testPullSecret,
		Hosts: []manifests.Host{{Hostname: "master-0", Interfaces: []manifests.Interface{{Name: "eth0", MACAddress: macOf(0)}},
			NetworkConfig: "interfaces:\n- name: eth0\n  type: ethernet\n  state: up\n  ipv6:\n    enabled: true\n    address:\n    - ip: fd2e:6f44:5dd8:c956::50\n      prefix-length: 120\n"}},
	}
}

func dualStackSpec() manifests.Spec {
	s := ipv6Spec()
	s.ClusterName = "dual"
	s.APIVIPs = []string{"192.168.111.5", "fd2e:6f44:5dd8:c956::5"}
	s.IngressVIPs = []string{"192.168.111.4", "fd2e:6f44:5dd8:c956::4"}
	s.ClusterNetworks = []manifests.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}, {CIDR: "fd01::/48", HostPrefix: 64}}
	s.ServiceNetworks = []string{"172.30.0.0/16", "fd02::/112"}
	s.MachineNetworks = []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/120"}
	return s
}
