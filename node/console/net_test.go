package console

import (
	"crypto/rand"
	"encoding/hex"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/tui"
)

// TestNetState reads the network page's data from a namespace of the
// test's own: a veth NIC with IPv4 and IPv6 and the default route, its
// peer with an address of its own, a second pair that is down; the
// resolver from the root's resolv.conf. (veth: the kernels this runs on
// may lack the dummy, vlan and bond modules.)
func TestNetState(t *testing.T) {
	testbed.NeedRoot(t)
	testbed.NeedTool(t, "ip")
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ns := "nzcon-" + hex.EncodeToString(b)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	in := func(args ...string) { t.Helper(); ip(append([]string{"-n", ns}, args...)...) }
	in("link", "set", "lo", "up")
	in("link", "add", "eth9", "address", "52:54:00:aa:bb:01", "mtu", "9000", "type", "veth", "peer", "name", "peer9", "mtu", "9000")
	in("link", "set", "peer9", "up")
	in("link", "set", "eth9", "up")
	in("addr", "add", "192.0.2.10/24", "dev", "eth9")
	in("addr", "add", "2001:db8::10/64", "dev", "eth9", "nodad")
	in("route", "add", "default", "via", "192.0.2.1", "dev", "eth9", "metric", "100")
	in("addr", "add", "198.51.100.5/25", "dev", "peer9")
	in("link", "add", "eth8", "type", "veth", "peer", "name", "peer8")

	h, err := netns.GetFromName(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	nh, err := netlink.NewHandleAt(h)
	if err != nil {
		t.Fatal(err)
	}
	defer nh.Close()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "etc/resolv.conf"), "# test\nsearch example.com lab.example.com\nnameserver 192.0.2.53\nnameserver 2001:db8::53\n")
	writeFile(t, filepath.Join(root, "etc/hostname"), "master-0\n")

	st, err := NetState(nh, root)
	if err != nil {
		t.Fatal(err)
	}
	if st.Hostname != "master-0" {
		t.Errorf("hostname %q", st.Hostname)
	}
	if len(st.Interfaces) == 0 || st.Interfaces[0].Name != "eth9" || !st.Interfaces[0].Default {
		t.Fatalf("interfaces %+v: want eth9 first, as the default route's", st.Interfaces)
	}
	byName := map[string]tui.NetInterface{}
	for _, i := range st.Interfaces {
		byName[i.Name] = i
	}
	eth := byName["eth9"]
	if eth.Type != "veth" || eth.State != "up" || eth.MAC != "52:54:00:aa:bb:01" || eth.MTU != 9000 {
		t.Errorf("eth9 = %+v", eth)
	}
	for _, p := range []string{"192.0.2.10/24", "2001:db8::10/64"} {
		if !slices.Contains(eth.Addrs, netip.MustParsePrefix(p)) {
			t.Errorf("eth9 addresses %v lack %s", eth.Addrs, p)
		}
	}
	if v := byName["peer9"]; v.Type != "veth" || v.Default || !slices.Contains(v.Addrs, netip.MustParsePrefix("198.51.100.5/25")) {
		t.Errorf("peer9 = %+v", v)
	}
	if d := byName["eth8"]; d.State != "down" || d.Default {
		t.Errorf("eth8 = %+v, want down", d)
	}
	if lo := byName["lo"]; lo.Type != "loopback" || lo.State != "up" {
		t.Errorf("lo = %+v", lo)
	}
	var def *tui.NetRoute
	for i, r := range st.Routes {
		if !r.Destination.IsValid() {
			def = &st.Routes[i]
		}
	}
	if def == nil || def.Gateway != netip.MustParseAddr("192.0.2.1") || def.Interface != "eth9" || def.Metric != 100 {
		t.Errorf("default route %+v in %+v", def, st.Routes)
	}
	if !slices.Equal(st.DNS.Servers, []string{"192.0.2.53", "2001:db8::53"}) || !slices.Equal(st.DNS.Search, []string{"example.com", "lab.example.com"}) {
		t.Errorf("dns %+v", st.DNS)
	}
}

// TestLocalAddrs: the rendezvous page's candidates leave out loopback and
// link-local addresses and list IPv4 first (read from this machine's
// links; nothing is sent).
func TestLocalAddrs(t *testing.T) {
	addrs, err := localAddrs()
	if err != nil {
		t.Fatal(err)
	}
	seen6 := false
	for _, a := range addrs {
		if a.IsLoopback() || a.IsLinkLocalUnicast() {
			t.Errorf("candidate %s is loopback or link-local", a)
		}
		if a.Is6() {
			seen6 = true
		} else if seen6 {
			t.Errorf("IPv4 %s after an IPv6 address in %v", a, addrs)
		}
	}
}
