package testbed

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestServices: the bed's dnsmasq answers the cluster's names from inside a
// host (and forgets a removed one), its registry answers the v2 API and can
// be stopped and started, its NTP source answers; each host's namespace
// has a resolv.conf naming the gateway, removed with the bed.
func TestServices(t *testing.T) {
	needTool(t, "dnsmasq")
	needTool(t, "docker-registry")
	needTool(t, "chronyd")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefix := freePrefix(t)
	b := NewT(t, Config{Prefix: prefix, Hosts: []HostSpec{{Name: "h0", Static: true}}})
	h := b.Hosts[0]
	vip := nth(prefix.Addr(), 5)
	apps := nth(prefix.Addr(), 4)

	dns, err := b.StartDNS(ctx, DNSConfig{
		Records:   []Record{{Name: "api.c.test", Addrs: []netip.Addr{vip}}, {Name: "api-int.c.test", Addrs: []netip.Addr{vip}}},
		Wildcards: []Record{{Name: "apps.c.test", Addrs: []netip.Addr{apps}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return h.DialContext(ctx, network, net.JoinHostPort(b.Gateway.String(), "53"))
	}}
	lookup := func(name string) ([]string, error) { return res.LookupHost(ctx, name) }
	if got, err := lookup("api.c.test"); err != nil || len(got) != 1 || got[0] != vip.String() {
		t.Errorf("api.c.test = %v %v, want %s", got, err, vip)
	}
	if got, err := lookup("console-openshift-console.apps.c.test"); err != nil || len(got) != 1 || got[0] != apps.String() {
		t.Errorf("apps wildcard = %v %v, want %s", got, err, apps)
	}
	if _, err := lookup("example.com"); err == nil {
		t.Error("a name outside the bed resolved: dnsmasq must have no upstream")
	}
	if err := dns.SetRecords([]Record{{Name: "api-int.c.test", Addrs: []netip.Addr{vip}}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := lookup("api.c.test")
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("api.c.test still resolves after its record was removed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rc, err := os.ReadFile(filepath.Join(etcNetnsDir, h.NS, "resolv.conf"))
	if err != nil || string(rc) != "nameserver "+b.Gateway.String()+"\n" {
		t.Errorf("resolv.conf for %s: %q %v", h.NS, rc, err)
	}

	reg, err := b.StartRegistry(ctx, RegistryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: h.DialContext}, Timeout: 5 * time.Second}
	get := func() error {
		resp, err := hc.Get("http://" + reg.Addr + "/v2/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return errors.New(resp.Status)
		}
		return nil
	}
	if err := get(); err != nil {
		t.Fatalf("registry /v2/: %v", err)
	}
	reg.Stop()
	if err := get(); err == nil {
		t.Error("stopped registry still answers")
	}
	if err := reg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := get(); err != nil {
		t.Errorf("restarted registry: %v", err)
	}

	ntp, err := b.StartNTP(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := inNetns(h.NS, func() error { return sntpProbe(ctx, net.JoinHostPort(ntp.Addr.String(), "123")) }); err != nil {
		t.Errorf("NTP from the host: %v", err)
	}
	ntp.Stop()

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(etcNetnsDir, h.NS)); !os.IsNotExist(err) {
		t.Errorf("/etc/netns/%s left behind: %v", h.NS, err)
	}
}
