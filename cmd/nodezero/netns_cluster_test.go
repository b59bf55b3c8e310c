package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// netnsCluster is the five hosts of the namespace tests (three masters and
// two workers, NICs and MACs as in their hardware trees) on a bed with the
// cluster's DNS, and the config image made for them. Nothing is booted.
type netnsCluster struct {
	opts               netnsOptions
	bed                *testbed.Bed
	hosts              []*bedHost
	zero               *bedHost
	dns                *testbed.DNS
	ntp                *testbed.NTP      // with opts.NTP
	registry           *testbed.Registry // with opts.Registry
	release            string            // the release image
	releaseSize        int64             // its blobs' bytes, with opts.Registry
	apiVIP, ingressVIP netip.Addr
	iso                []byte
}

// netnsOptions shape the namespace cluster.
type netnsOptions struct {
	// Workers is how many workers the cluster expects: 2 boot, 3 adds one
	// that never boots, so the install never starts.
	Workers int
	// NTP runs an NTP source on the bed and names it in the agent-config.
	NTP bool
	// PlatformNone makes the cluster user-managed networking (platform
	// none): no VIPs, and the api names must resolve in the bed's DNS.
	PlatformNone bool
	// DHCP serves leases from the bed's dnsmasq (for VIP allocation), two
	// minutes long, dnsmasq's shortest.
	DHCP bool
	// Registry serves the release image from the bed's registry over TLS,
	// its CA the install-config's additionalTrustBundle; otherwise the
	// release is quay.io's, resolved in the bed and never pulled.
	Registry bool
}

// registryName is the bed registry's name in the bed's DNS.
const registryName = "registry.netns.nodezero.test"

// newNetnsCluster builds the bed.
func newNetnsCluster(t *testing.T, ctx context.Context, o netnsOptions) *netnsCluster {
	t.Helper()
	needRoot(t)
	needTool(t, "ip")
	needTool(t, "dnsmasq")
	prefix, err := testbed.FreePrefix(ctx)
	if err != nil {
		t.Fatal(err)
	}
	specs := []struct{ name, nic, mac string }{
		{"master-0", "eno1", "b0:7b:25:a0:00:01"},
		{"master-1", "eno1", "b0:7b:25:a1:00:01"},
		{"master-2", "eno1", "b0:7b:25:a2:00:01"},
		{"worker-0", "eno1", "3c:ec:ef:b0:00:01"},
		{"worker-1", "enp1s0", "52:54:00:b1:00:01"},
	}
	cfg := testbed.Config{Prefix: prefix}
	for _, s := range specs {
		mac, _ := net.ParseMAC(s.mac)
		// The bed gives every host its address, as DHCP or NetworkManager
		// with the installed keyfile would: there is no NetworkManager
		// inside a namespace.
		cfg.Hosts = append(cfg.Hosts, testbed.HostSpec{Name: s.name, NIC: s.nic, MAC: mac, Static: true})
	}
	n := &netnsCluster{opts: o, bed: testbed.NewT(t, cfg), release: defaultRelease}
	disks := ramDisks(t)
	for _, h := range n.bed.Hosts {
		hw, err := filepath.Abs(filepath.Join("..", "..", "testdata", "hw", h.Name))
		if err != nil {
			t.Fatal(err)
		}
		n.hosts = append(n.hosts, &bedHost{Host: h, hw: hw, image: filepath.Join(n.bed.Dir, h.Name+".iso"), disks: filepath.Join(disks, h.Name)})
	}
	n.zero = n.hosts[0]
	t.Cleanup(func() {
		if t.Failed() {
			// A stuck daemon shows where it is stuck: Go dumps every
			// goroutine to the log on SIGQUIT.
			for _, h := range n.hosts {
				if h.cmd != nil && h.cmd.ProcessState == nil {
					_ = h.cmd.Process.Signal(syscall.SIGQUIT)
				}
			}
			time.Sleep(time.Second)
			for _, h := range n.hosts {
				t.Logf("---- %s (boot %d) ----\n%s", h.Name, h.runs, h.output())
			}
		}
	})

	// The cluster's DNS on the bed: api and api-int at the API VIP, the apps
	// wildcard at the ingress VIP; each host's resolv.conf names it.
	base := prefix.Addr().As4()
	api, ingress := base, base
	api[3], ingress[3] = 5, 4
	n.apiVIP, n.ingressVIP = netip.AddrFrom4(api), netip.AddrFrom4(ingress)
	dnsCfg := testbed.DNSConfig{
		Records:   n.records(),
		Wildcards: []testbed.Record{{Name: "apps.netns.nodezero.test", Addrs: []netip.Addr{n.ingressVIP}}},
	}
	if o.DHCP {
		first, last := base, base
		first[3], last[3] = 100, 150
		dnsCfg.DHCP = [2]netip.Addr{netip.AddrFrom4(first), netip.AddrFrom4(last)}
		dnsCfg.LeaseTime = 2 * time.Minute
	}
	if n.dns, err = n.bed.StartDNS(ctx, dnsCfg); err != nil {
		t.Fatal(err)
	}
	if o.Registry {
		needTool(t, "docker-registry")
		if n.registry, err = n.bed.StartRegistry(ctx, testbed.RegistryConfig{Names: []string{registryName}}); err != nil {
			t.Fatal(err)
		}
		// A small image: what is measured is that it comes down, whole.
		if _, n.releaseSize, err = n.registry.Push(ctx, "ocp/release", "4.18.0-x86_64", []byte("release payload"), bytes.Repeat([]byte("layer "), 50_000)); err != nil {
			t.Fatal(err)
		}
		n.release = registryName + ":5000/ocp/release:4.18.0-x86_64"
		if err := n.dns.SetRecords(n.records()); err != nil {
			t.Fatal(err)
		}
	}
	ntpSource := ""
	if o.NTP {
		needTool(t, "chronyd")
		if n.ntp, err = n.bed.StartNTP(ctx); err != nil {
			t.Fatal(err)
		}
		ntpSource = n.ntp.Addr.String()
	}
	dir := t.TempDir()
	var ca []byte
	if n.registry != nil {
		ca = n.registry.CA
	}
	netnsInputs(t, dir, n.bed, n.hosts, netnsTemplate{Workers: o.Workers, NTP: ntpSource, PlatformNone: o.PlatformNone, TrustBundle: string(ca)})
	runBinary(t, "create", "config-image", "--dir", dir, "--release-image", n.release)
	if n.iso, err = os.ReadFile(filepath.Join(dir, "agentconfig.noarch.iso")); err != nil {
		t.Fatal(err)
	}
	return n
}

// records are the cluster's exact DNS names: api and api-int at the API
// VIP (with platform none, the address of the user's load balancer) and
// the release image's registry at the gateway.
func (n *netnsCluster) records() []testbed.Record {
	return []testbed.Record{
		{Name: "api.netns.nodezero.test", Addrs: []netip.Addr{n.apiVIP}},
		{Name: "api-int.netns.nodezero.test", Addrs: []netip.Addr{n.apiVIP}},
		{Name: validation.ReleaseImageHost(n.release), Addrs: []netip.Addr{n.bed.Gateway}},
	}
}

// ramDisks is a tmpfs for the files standing in for the hosts' disks: the
// disk speed check's fdatasync then measures memory, as fast as the NVMe
// disks the hardware trees describe, and not the CI machine's disk.
func ramDisks(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "nodezero-disks", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs for the disks: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// attach puts the config image where h looks for it.
func (n *netnsCluster) attach(h *bedHost) {
	if err := os.WriteFile(h.image, n.iso, 0o644); err != nil {
		panic(err)
	}
}

// client is node zero's API with the user token, reached from inside node
// zero's namespace.
func (n *netnsCluster) client(t *testing.T) *wire.Client {
	t.Helper()
	env := filepath.Join(n.zero.Root, "etc/assisted/rendezvous-host.env")
	waitFor(t, "node zero to load its config image", time.Minute, func() (bool, string) {
		_, err := os.Stat(env)
		return err == nil, fmt.Sprint(err)
	})
	rv := readEnv(t, env)
	hc := &http.Client{Transport: &http.Transport{DialContext: n.zero.DialContext}}
	c, err := wire.NewClient(strings.TrimSuffix(rv["SERVICE_BASE_URL"], "/"), wire.WithUserToken(rv["USER_AUTH_TOKEN"]), wire.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hostsNow lists the hosts by name and describes them, failing validations
// included.
func (n *netnsCluster) hostsNow(t *testing.T, ctx context.Context, c *wire.Client) (map[string]*wire.Host, string) {
	ies, err := c.ListInfraEnvs(ctx, "")
	if err != nil || len(ies) == 0 {
		return nil, fmt.Sprintf("infra-envs: %v %v", ies, err)
	}
	hs, err := c.ListHosts(ctx, ies[0].ID)
	if err != nil {
		return nil, err.Error()
	}
	byName := map[string]*wire.Host{}
	var desc []string
	for _, h := range hs {
		byName[h.RequestedHostname] = h
		d := fmt.Sprintf("%s=%s", h.RequestedHostname, h.Status)
		if h.ValidationsInfo != "" {
			for id, v := range validations(t, h.ValidationsInfo) {
				if v[0] == "failure" {
					d += fmt.Sprintf(" [%s: %s]", id, v[1])
				}
			}
		}
		desc = append(desc, d)
	}
	return byName, strings.Join(desc, " ")
}
