package inventory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.json")

// goldenAddresses gives every tree a fixed address, so the golden files do
// not depend on this machine's interfaces.
var goldenAddresses = map[string][]netip.Prefix{
	"master-0":      {netip.MustParsePrefix("192.168.111.20/24")},
	"master-1":      {netip.MustParsePrefix("192.168.111.21/24")},
	"master-2":      {netip.MustParsePrefix("192.168.111.22/24"), netip.MustParsePrefix("fd00:1::22/64")},
	"worker-0":      {netip.MustParsePrefix("192.168.111.23/24")},
	"worker-1":      {netip.MustParsePrefix("192.168.111.24/24")},
	"undersized":    {netip.MustParsePrefix("192.168.111.25/24")},
	"smalldisk":     {netip.MustParsePrefix("192.168.111.26/24")},
	"placeholder-a": {netip.MustParsePrefix("192.168.111.27/24")},
	"placeholder-b": {netip.MustParsePrefix("192.168.111.28/24")},
	"mounted":       {netip.MustParsePrefix("192.168.111.29/24")},
}

func TestCollectGolden(t *testing.T) {
	for _, name := range hwTrees(t) {
		t.Run(name, func(t *testing.T) {
			addrs, ok := goldenAddresses[name]
			if !ok {
				t.Fatalf("tree %s has no entry in goldenAddresses", name)
			}
			inv, err := Collect(context.Background(), Options{Root: hwTree(t, name), Addresses: addrs, Hostname: name})
			if err != nil {
				t.Fatalf("Collect(%s): %v", name, err)
			}
			got, err := json.MarshalIndent(inv, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("Collect(%s) JSON differs from %s (-want +got):\n%s", name, golden, diff)
			}
			assertNoZeroFields(t, got)
		})
	}
}

// assertNoZeroFields checks that the JSON omits zero, false, empty and null
// values, as the real agent's inventory does (docs/reference/agent-protocol-transcript.md §3).
func assertNoZeroFields(t *testing.T, data []byte) {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case nil:
			t.Errorf("%s is null", path)
		case bool:
			if !x {
				t.Errorf("%s is false", path)
			}
		case string:
			if x == "" {
				t.Errorf("%s is an empty string", path)
			}
		case json.Number:
			if x.String() == "0" {
				t.Errorf("%s is 0", path)
			}
		case []any:
			if len(x) == 0 {
				t.Errorf("%s is an empty list", path)
			}
			for i, e := range x {
				walk(path+"["+jsonIndex(i)+"]", e)
			}
		case map[string]any:
			if len(x) == 0 {
				t.Errorf("%s is an empty object", path)
			}
			for k, e := range x {
				walk(path+"."+k, e)
			}
		}
	}
	walk("inventory", v)
}

func jsonIndex(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestCollectGoldenCoversEveryTree(t *testing.T) {
	for name := range goldenAddresses {
		hwTree(t, name)
	}
	if got, want := len(hwTrees(t)), len(goldenAddresses); got != want {
		t.Errorf("%d trees under %s, want %d (one per goldenAddresses entry)", got, hwDir, want)
	}
}

func TestCollectAddressesOverride(t *testing.T) {
	addrs := []netip.Prefix{
		netip.MustParsePrefix("127.0.0.12/8"),
		netip.MustParsePrefix("fd00:1::12/64"),
		netip.MustParsePrefix("fe80::12/64"),
		{}, // the zero Prefix is ignored
	}
	inv, err := Collect(context.Background(), Options{Root: hwTree(t, "master-1"), Addresses: addrs, Hostname: "master-1"})
	if err != nil {
		t.Fatal(err)
	}
	type addrView struct {
		Name, Type string
		V4, V6     []string
	}
	var got []addrView
	for _, i := range inv.Interfaces {
		got = append(got, addrView{i.Name, i.Type, i.IPv4Addresses, i.IPv6Addresses})
	}
	want := []addrView{
		{Name: "lo", Type: "device"},
		{Name: "eno1", Type: "physical", V4: []string{"127.0.0.12/8"}, V6: []string{"fd00:1::12/64"}},
		{Name: "eno2", Type: "physical"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
	wantRoutes := []*wire.Route{
		{Interface: "eno1", Destination: "0.0.0.0", Gateway: "127.0.0.1", Family: 2},
		{Interface: "eno1", Destination: "127.0.0.0", Family: 2},
		{Interface: "eno1", Destination: "::", Gateway: "fd00:1::1", Family: 10, Metric: 1024},
		{Interface: "eno1", Destination: "fd00:1::", Family: 10, Metric: 256},
	}
	if diff := cmp.Diff(wantRoutes, inv.Routes); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
}

func TestCollectHostname(t *testing.T) {
	master0 := hwTree(t, "master-0")
	osName, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(forbiddenHostnames, osName) {
		osName = "b0-7b-25-a0-00-01"
	}
	global := []netip.Prefix{netip.MustParsePrefix("192.168.111.20/24")}
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.20/8")}
	tests := []struct {
		name     string
		hostname string
		addrs    []netip.Prefix
		want     string
	}{
		{"kept", "master-0.example.com", global, "master-0.example.com"},
		{"trimmed", " master-0\n", global, "master-0"},
		{"localhost replaced by MAC", "localhost", global, "b0-7b-25-a0-00-01"},
		{"localhost.localdomain replaced", "localhost.localdomain", global, "b0-7b-25-a0-00-01"},
		{"localhost6.localdomain6 replaced", "localhost6.localdomain6", global, "b0-7b-25-a0-00-01"},
		// 127.x is not a global unicast address, so no NIC qualifies and
		// the agent keeps the forbidden name.
		{"no global address keeps localhost", "localhost", loopback, "localhost"},
		{"empty means os.Hostname", "", global, osName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Collect(context.Background(), Options{Root: master0, Addresses: tc.addrs, Hostname: tc.hostname})
			if err != nil {
				t.Fatal(err)
			}
			if inv.Hostname != tc.want {
				t.Errorf("hostname %q = %q, want %q", tc.hostname, inv.Hostname, tc.want)
			}
		})
	}
}

func TestUsableNIC(t *testing.T) {
	ifaces := []*wire.Interface{
		{Name: "eth1", Type: "physical", MACAddress: "aa:00:00:00:00:01", IPv4Addresses: []string{"10.0.0.1/24"}},
		{Name: "bond0", Type: "bond", MACAddress: "aa:00:00:00:00:02", IPv6Addresses: []string{"2001:db8::2/64"}},
		{Name: "br0", Type: "bridge", MACAddress: "aa:00:00:00:00:03", IPv4Addresses: []string{"10.0.1.1/24"}},
		{Name: "aa0", Type: "physical", IPv4Addresses: []string{"10.0.2.1/24"}},
	}
	got := usableNIC(ifaces)
	if got == nil || got.Name != "bond0" {
		t.Errorf("usableNIC = %v, want bond0 (first by name that is physical/vlan/bond with a MAC and a global address)", got)
	}
}

func TestCollectRootDefaultsToGHWChroot(t *testing.T) {
	root := hwTree(t, "worker-0")
	t.Setenv("GHW_CHROOT", root)
	got, err := Collect(context.Background(), Options{Hostname: "x", Addresses: goldenAddresses["worker-0"]})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Collect(context.Background(), Options{Root: root, Hostname: "x", Addresses: goldenAddresses["worker-0"]})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Collect with GHW_CHROOT differs from Root (-want +got):\n%s", diff)
	}
}

func TestCollectErrors(t *testing.T) {
	if _, err := Collect(context.Background(), Options{Root: filepath.Join(t.TempDir(), "missing")}); !errors.Is(err, ErrRoot) {
		t.Errorf("Collect(missing root) error = %v, want ErrRoot", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Collect(ctx, Options{Root: hwTree(t, "master-0")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Collect(cancelled) error = %v, want context.Canceled", err)
	}
}

// An empty root yields an inventory of defaults and no panic: every section
// tolerates missing files, as the agent tolerates failing tools.
func TestCollectEmptyRoot(t *testing.T) {
	inv, err := Collect(context.Background(), Options{Root: t.TempDir(), Hostname: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Boot.CurrentBootMode != "bios" || inv.Boot.SecureBootState != wire.SecureBootStateNotSupported {
		t.Errorf("boot = %+v, want bios and NotSupported", inv.Boot)
	}
	if inv.TPMVersion != wire.InventoryTPMVersionNone {
		t.Errorf("tpm_version = %q, want none", inv.TPMVersion)
	}
	if len(inv.Disks)+len(inv.Interfaces)+len(inv.GPUs)+len(inv.Routes) != 0 {
		t.Errorf("empty root gave disks %v, interfaces %v, gpus %v, routes %v; want none", inv.Disks, inv.Interfaces, inv.GPUs, inv.Routes)
	}
	if inv.BMCAddress != "0.0.0.0" || inv.BMCV6address != "::/0" {
		t.Errorf("bmc = %q %q, want the agent's no-BMC defaults", inv.BMCAddress, inv.BMCV6address)
	}
}

// A malformed mounts file makes ghw's parser index an empty line; the disks
// section is lost, the inventory is not.
func TestCollectSurvivesGHWPanic(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"sys/block/sda/size":      "209715200\n",
		"sys/block/sda/sda1/size": "2048\n",
		"sys/block/sda/sda1/dev":  "8:1\n",
		"proc/self/mounts":        "\n/dev/sda1 / xfs rw 0 0\n",
		"proc/cpuinfo":            "processor\t: 0\nmodel name\t: X\n\n",
	})
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	inv, err := Collect(context.Background(), Options{Root: root, Hostname: "h", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if inv.CPU.Count != 1 {
		t.Errorf("cpu count = %d, want 1", inv.CPU.Count)
	}
	if inv.Disks != nil {
		t.Errorf("disks = %v, want none after ghw's panic", inv.Disks)
	}
	if !strings.Contains(logs.String(), "panic") {
		t.Errorf("log does not mention the recovered panic:\n%s", logs.String())
	}
}

func BenchmarkCollect(b *testing.B) {
	o := Options{Root: hwTree(b, "master-0"), Addresses: goldenAddresses["master-0"], Hostname: "master-0"}
	ctx := context.Background()
	for b.Loop() {
		if _, err := Collect(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
}
