package sandbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"

	"github.com/nodezero/nodezero/testbed"
)

// The sandbox in network namespaces (Options.NetNS, `--netns`, root): each
// host is a namespace of a test bed (package testbed) cabled to the bed's
// bridge, with the NIC name and MAC of its hardware tree and a static
// address of the bed's /24, so its `nodezero run` sees its own addresses
// and no --host-address is needed; the bed's dnsmasq answers the
// cluster's names (every host's resolv.conf names it) and docker-registry
// serves the release image, both on the bed's gateway. Nothing is added to
// the root namespace (testbed's rules): the sandbox reaches node zero's
// API from inside node zero's namespace. The installed cluster's
// Kubernetes API runs on loopback, which no host can reach from its
// namespace: it is skipped here (kube.go).

// bedTools are what a bed and its responders run.
var bedTools = []string{"ip", "dnsmasq", "docker-registry"}

// registryName is the release registry's name in the bed's DNS.
const registryName = "registry." + ClusterName + "." + BaseDomain

// freeBedPrefix checks what a bed needs and returns a /24 for it that
// the root namespace does not use.
func freeBedPrefix(ctx context.Context) (netip.Prefix, error) {
	if euid := os.Geteuid(); euid != 0 {
		return netip.Prefix{}, fmt.Errorf("sandbox: --netns needs root (running as uid %d)", euid)
	}
	for _, t := range bedTools {
		if _, err := exec.LookPath(t); err != nil {
			return netip.Prefix{}, fmt.Errorf("sandbox: --netns needs %s: %w", t, err)
		}
	}
	p, err := testbed.FreePrefix(ctx)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("sandbox: --netns: %w", err)
	}
	return p, nil
}

// startBed makes the bed: one namespace per host, at the host's address,
// with its hardware tree's NIC and MAC.
func (r *run) startBed(ctx context.Context) error {
	cfg := testbed.Config{Prefix: r.prefix}
	for _, h := range r.hosts {
		mac, err := net.ParseMAC(h.MAC)
		if err != nil {
			return fmt.Errorf("sandbox: hardware tree %s: %s's MAC %q: %w", h.hw, h.NIC, h.MAC, err)
		}
		cfg.Hosts = append(cfg.Hosts, testbed.HostSpec{Name: h.Name, NIC: h.NIC, MAC: mac, Addr: h.Addr, Static: true})
	}
	bed, err := testbed.New(ctx, cfg)
	if err != nil {
		return fmt.Errorf("sandbox: --netns: %w", err)
	}
	r.bed = bed
	r.closers = append(r.closers, func() {
		if err := bed.Close(); err != nil {
			fmt.Fprintf(r.o.stderr(), "sandbox: %v\n", err)
		}
	})
	for i, h := range r.hosts {
		bh := bed.Hosts[i]
		h.ns = bh.NS
		// The supervisor stops the process itself (SIGTERM, then
		// SIGKILL); the bed kills what is left when it closes.
		h.command = func(name string, args ...string) *exec.Cmd {
			return bh.Command(context.WithoutCancel(ctx), name, args...)
		}
	}
	r.say("test bed %s: %d network namespaces on the bridge %s, %s", bed.ID, len(bed.Hosts), bed.Bridge, bed.Prefix)
	return nil
}

// startBedResponders starts what the host checks ask, on the bed's
// gateway: dnsmasq with the cluster's names and the registry's, and the
// registry with the release image.
func (r *run) startBedResponders(ctx context.Context) error {
	clusterDomain := ClusterName + "." + BaseDomain
	// With platform none the cluster's names point at the user's load
	// balancer: an address of the bed's where nothing listens (the
	// cluster is simulated), never a host's, as the validations demand.
	r.lb = r.addr(3)
	dns, err := r.bed.StartDNS(ctx, testbed.DNSConfig{
		Records: []testbed.Record{
			{Name: "api." + clusterDomain, Addrs: []netip.Addr{r.lb}},
			{Name: "api-int." + clusterDomain, Addrs: []netip.Addr{r.lb}},
			{Name: registryName, Addrs: []netip.Addr{r.bed.Gateway}},
		},
		Wildcards: []testbed.Record{{Name: "apps." + clusterDomain, Addrs: []netip.Addr{r.lb}}},
	})
	if err != nil {
		return fmt.Errorf("sandbox: dns: %w", err)
	}
	r.closers = append(r.closers, dns.Stop)
	reg, err := r.bed.StartRegistry(ctx, testbed.RegistryConfig{Names: []string{registryName}})
	if err != nil {
		return fmt.Errorf("sandbox: registry: %w", err)
	}
	r.closers = append(r.closers, reg.Stop)
	if _, _, err := reg.Push(ctx, releaseRepo, releaseTag, releaseLayer()); err != nil {
		return fmt.Errorf("sandbox: registry: %w", err)
	}
	_, port, _ := net.SplitHostPort(reg.Addr)
	r.registry, r.registryCA = net.JoinHostPort(registryName, port), reg.CA
	r.release = r.registry + "/" + releaseRepo + ":" + releaseTag
	r.say("DNS on %s, release image %s", net.JoinHostPort(r.bed.Gateway.String(), "53"), r.release)
	return nil
}

// bedHTTPClient reaches node zero's API from inside its namespace,
// trusting the API's CA with APITLS (wire.WithHTTPClient leaves
// WithCACertFile aside).
func (r *run) bedHTTPClient() (*http.Client, error) {
	tr := &http.Transport{DialContext: r.bed.DialContext}
	if len(r.bed.Hosts) > 0 {
		tr.DialContext = r.bed.Hosts[0].DialContext
	}
	if r.o.APITLS {
		ca, err := os.ReadFile(APICAFile(r.installDir))
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("sandbox: api tls: no certificate in " + APICAFile(r.installDir))
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}, nil
}
