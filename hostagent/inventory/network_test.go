package inventory

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

// hostHex formats an IPv4 address the way /proc/net/route prints it: the
// raw 32-bit value in host byte order.
func hostHex(a, b, c, d byte) string {
	return fmt.Sprintf("%08X", binary.NativeEndian.Uint32([]byte{a, b, c, d}))
}

func TestParseRoutes4(t *testing.T) {
	table := "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		fmt.Sprintf("eth0\t%s\t%s\t0003\t0\t0\t100\t%s\t0\t0\t0\n", hostHex(0, 0, 0, 0), hostHex(192, 168, 111, 1), hostHex(0, 0, 0, 0)) +
		fmt.Sprintf("eth0\t%s\t%s\t0001\t0\t0\t0\t%s\t0\t0\t0\n", hostHex(192, 168, 111, 0), hostHex(0, 0, 0, 0), hostHex(255, 255, 255, 0)) +
		"garbage line\n"
	want := []*wire.Route{
		{Interface: "eth0", Destination: "0.0.0.0", Gateway: "192.168.111.1", Family: 2, Metric: 100},
		{Interface: "eth0", Destination: "192.168.111.0", Family: 2},
	}
	if diff := cmp.Diff(want, parseRoutes4(table)); diff != "" {
		t.Errorf("parseRoutes4 (-want +got):\n%s", diff)
	}
}

func TestParseRoutes6(t *testing.T) {
	const zero = "00000000000000000000000000000000"
	table := "" +
		// default via fe80::1, metric 1024
		zero + " 00 " + zero + " 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003     eth0\n" +
		// fd00:1::/64 on link, metric 256
		"fd000001000000000000000000000000 40 " + zero + " 00 " + zero + " 00000100 00000001 00000000 00000001     eth0\n" +
		// fe80::/64 on link
		"fe800000000000000000000000000000 40 " + zero + " 00 " + zero + " 00000100 00000001 00000000 00000001     eth0\n" +
		// local address (local table), multicast, unreachable null entry: not in netlink's main-table dump
		"fd000001000000000000000000000022 80 " + zero + " 00 " + zero + " 00000000 00000002 00000000 80200001     eth0\n" +
		"ff000000000000000000000000000000 08 " + zero + " 00 " + zero + " 00000100 00000001 00000000 00000001     eth0\n" +
		zero + " 00 " + zero + " 00 " + zero + " ffffffff 00000001 00000000 00200200       lo\n"
	want := []*wire.Route{
		{Interface: "eth0", Destination: "::", Gateway: "fe80::1", Family: 10, Metric: 1024},
		{Interface: "eth0", Destination: "fd00:1::", Family: 10, Metric: 256},
		{Interface: "eth0", Destination: "fe80::", Family: 10, Metric: 256},
	}
	if diff := cmp.Diff(want, parseRoutes6(table)); diff != "" {
		t.Errorf("parseRoutes6 (-want +got):\n%s", diff)
	}
}

// Without Addresses, routes come from the root's /proc/net files.
func TestCollectLiveRoutesFromRoot(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"proc/net/route": "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
			fmt.Sprintf("nz-test0\t%s\t%s\t0003\t0\t0\t100\t00000000\t0\t0\t0\n", hostHex(0, 0, 0, 0), hostHex(10, 0, 0, 1)),
	})
	inv, err := Collect(context.Background(), Options{Root: root, Hostname: "h"})
	if err != nil {
		t.Fatal(err)
	}
	want := []*wire.Route{{Interface: "nz-test0", Destination: "0.0.0.0", Gateway: "10.0.0.1", Family: 2, Metric: 100}}
	if diff := cmp.Diff(want, inv.Routes); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
}

func TestLinkFacts(t *testing.T) {
	root := writeRoot(t, merge(
		nicFiles("eth0", "F8:75:A4:A4:00:FE", "2"),
		map[string]string{
			"sys/devices/pci0000:00/0000:00:02.0/net/eth0/speed":  "25000\n",
			"sys/devices/pci0000:00/0000:00:02.0/vendor":          "0x8086\n",
			"sys/devices/pci0000:00/0000:00:02.0/device":          "0x159b\n",
			"sys/devices/pci0000:00/0000:00:02.0/net/eth0/device": "->../../../0000:00:02.0",
			// A bond, a VLAN on it, a bridge and a veth live under devices/virtual.
			"sys/devices/virtual/net/bond0/address":      "f8:75:a4:a4:00:fe\n",
			"sys/devices/virtual/net/bond0/ifindex":      "4\n",
			"sys/devices/virtual/net/bond0/flags":        "0x1403\n",
			"sys/devices/virtual/net/bond0/operstate":    "up\n",
			"sys/devices/virtual/net/bond0/bonding/mode": "active-backup 1\n",
			"sys/class/net/bond0":                        "->../../devices/virtual/net/bond0",
			"sys/devices/virtual/net/bond0.10/address":   "f8:75:a4:a4:00:fe\n",
			"sys/devices/virtual/net/bond0.10/ifindex":   "5\n",
			"sys/devices/virtual/net/bond0.10/uevent":    "DEVTYPE=vlan\nINTERFACE=bond0.10\n",
			"sys/class/net/bond0.10":                     "->../../devices/virtual/net/bond0.10",
			"sys/devices/virtual/net/br0/ifindex":        "6\n",
			"sys/devices/virtual/net/br0/uevent":         "DEVTYPE=bridge\n",
			"sys/class/net/br0":                          "->../../devices/virtual/net/br0",
			"sys/devices/virtual/net/veth1/ifindex":      "7\n",
			"sys/devices/virtual/net/veth1/flags":        "0x1002\n",
			"sys/class/net/veth1":                        "->../../devices/virtual/net/veth1",
			// A plain directory with the loopback type is still not physical.
			"sys/class/net/lo/type":      "772\n",
			"sys/class/net/lo/ifindex":   "1\n",
			"sys/class/net/lo/flags":     "0x9\n",
			"sys/class/net/lo/operstate": "unknown\n",
		},
	))
	c, err := newCollector(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Name, MAC, Type, Product, Vendor string
		Speed                            int64
		Flags                            net.Flags
	}
	var got []view
	for _, l := range c.links() {
		got = append(got, view{l.name, l.mac, l.typ, l.product, l.vendor, l.speed, l.flags})
	}
	want := []view{
		{Name: "lo", Type: "device", Flags: net.FlagUp | net.FlagLoopback | net.FlagRunning},
		{Name: "eth0", MAC: "f8:75:a4:a4:00:fe", Type: "physical", Product: "0x159b", Vendor: "0x8086", Speed: 25000,
			Flags: net.FlagUp | net.FlagBroadcast | net.FlagMulticast | net.FlagRunning},
		{Name: "bond0", MAC: "f8:75:a4:a4:00:fe", Type: "bond", Flags: net.FlagUp | net.FlagBroadcast | net.FlagMulticast | net.FlagRunning},
		{Name: "bond0.10", MAC: "f8:75:a4:a4:00:fe", Type: "vlan"},
		{Name: "br0", Type: "bridge"},
		{Name: "veth1", Type: "device", Flags: net.FlagBroadcast | net.FlagMulticast},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
}

func TestResolveStaysInRoot(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"dev/sda":                  "",
		"dev/disk/by-path/abs":     "->/dev/sda",
		"dev/disk/by-path/rel":     "->../../sda",
		"dev/disk/by-path/escape":  "->../../../../../../../../dev/sda",
		"dev/disk/by-path/loop":    "->loop",
		"dev/disk/by-path/missing": "->../../sdz",
	})
	c, err := newCollector(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"abs", "rel", "escape"} {
		if got, err := c.resolve("/dev/disk/by-path/" + name); err != nil || got != "/dev/sda" {
			t.Errorf("resolve(%s) = %q, %v; want /dev/sda", name, got, err)
		}
	}
	for _, name := range []string{"loop", "missing"} {
		if got, err := c.resolve("/dev/disk/by-path/" + name); err == nil {
			t.Errorf("resolve(%s) = %q, want an error", name, got)
		}
	}
}

// Without Addresses, an interface of the root gets the addresses the running
// system has on the interface of the same name; the loopback device is the
// one every Linux machine has.
func TestCollectLiveAddresses(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("this machine has no lo interface: %v", err)
	}
	root := writeRoot(t, map[string]string{
		"sys/devices/virtual/net/lo/type":    "772\n",
		"sys/devices/virtual/net/lo/ifindex": fmt.Sprintf("%d\n", lo.Index),
		"sys/class/net/lo":                   "->../../devices/virtual/net/lo",
	})
	inv, err := Collect(context.Background(), Options{Root: root, Hostname: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Interfaces) != 1 {
		t.Fatalf("interfaces = %v, want lo only", inv.Interfaces)
	}
	got := inv.Interfaces[0]
	if got.Type != "device" || !slices.Contains(got.IPv4Addresses, "127.0.0.1/8") {
		t.Errorf("lo = type %q, IPv4 %v; want type device with 127.0.0.1/8", got.Type, got.IPv4Addresses)
	}
}
