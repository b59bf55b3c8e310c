package nmstate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The worked examples of docs/reference/nmstate-keyfiles.md §1.9, copied
// literally: the golden files are our own output, these are the spec's.
const (
	refA = `[connection]
autoconnect=true
autoconnect-slaves=-1
id=eth0
interface-name=eth0
type=802-3-ethernet
uuid=dfd202f5-562f-5f07-8f2a-a7717756fb70

[ipv4]
address0=192.168.111.80/24
dhcp-timeout=2147483647
dns=192.168.111.1;8.8.8.8
dns-priority=40
dns-search=example.com
method=manual
route0=0.0.0.0/0,192.168.111.1,0
route0_options=table=254

[ipv6]
addr-gen-mode=0
dhcp-timeout=2147483647
method=disabled

[ethernet]
cloned-mac-address=52:54:01:AA:AA:A1
`
	refBBond = `[connection]
autoconnect=true
autoconnect-slaves=1
id=bond0
interface-name=bond0
type=bond
uuid=925b4a95-2de0-5b2d-bcf5-8b684a7e9cb4

[bond]
miimon=100
mode=active-backup

[ipv4]
address0=192.168.111.80/24
dhcp-timeout=2147483647
dns=192.168.111.1
dns-priority=40
method=manual
route0=0.0.0.0/0,192.168.111.1,0
route0_options=table=254

[ipv6]
addr-gen-mode=0
dhcp-timeout=2147483647
method=disabled
`
	refBPort = `[connection]
autoconnect=true
autoconnect-slaves=-1
id=eth0
interface-name=eth0
master=bond0
slave-type=bond
type=802-3-ethernet
uuid=dfd202f5-562f-5f07-8f2a-a7717756fb70
`
	refCParent = `[connection]
autoconnect=true
autoconnect-slaves=-1
id=eth0
interface-name=eth0
type=802-3-ethernet
uuid=dfd202f5-562f-5f07-8f2a-a7717756fb70

[ipv4]
dhcp-timeout=2147483647
method=disabled

[ipv6]
addr-gen-mode=0
dhcp-timeout=2147483647
method=disabled
`
	refCVLAN = `[connection]
autoconnect=true
autoconnect-slaves=-1
id=eth0.100
interface-name=eth0.100
type=vlan
uuid=fe885346-7e38-5cc2-9b35-2043508caa28

[ipv4]
address0=10.0.0.10/24
dhcp-timeout=2147483647
dns=10.0.0.1
dns-priority=40
method=manual
route0=0.0.0.0/0,10.0.0.1,0
route0_options=table=254

[ipv6]
addr-gen-mode=0
dhcp-timeout=2147483647
method=disabled

[vlan]
flags=1
id=100
parent=eth0
`
	refD = `[connection]
autoconnect=true
autoconnect-slaves=-1
id=eth0
interface-name=eth0
type=802-3-ethernet
uuid=dfd202f5-562f-5f07-8f2a-a7717756fb70

[ipv4]
dhcp-client-id=mac
dhcp-send-hostname=true
dhcp-timeout=2147483647
ignore-auto-dns=false
ignore-auto-routes=false
method=auto
never-default=false

[ipv6]
addr-gen-mode=0
dhcp-duid=ll
dhcp-iaid=mac
dhcp-send-hostname=true
dhcp-timeout=2147483647
ignore-auto-dns=false
ignore-auto-routes=false
method=auto
never-default=false
ra-timeout=2147483647
`
	// (e) is given in prose: this is that prose spelled out.
	refEBridge = `[connection]
autoconnect=true
autoconnect-slaves=1
id=br0
interface-name=br0
type=bridge
uuid=21dd2f8f-7814-535b-8225-a001da95c87e

[bridge]
stp=false
vlan-filtering=false

[ipv4]
dhcp-client-id=mac
dhcp-send-hostname=true
dhcp-timeout=2147483647
ignore-auto-dns=false
ignore-auto-routes=false
method=auto
never-default=false

[ipv6]
dhcp-timeout=2147483647
method=disabled
`
	refEPort = `[connection]
autoconnect=true
autoconnect-slaves=-1
id=eth1
interface-name=eth1
master=br0
slave-type=bridge
type=802-3-ethernet
uuid=0523c0a1-5f5e-5603-bcf2-68155d5d322e

[bridge-port]
`
)

func TestReferenceExamples(t *testing.T) {
	port1 := func(s string) string { // eth1's file is eth0's with the name and uuid changed
		return strings.ReplaceAll(strings.ReplaceAll(s, "eth0", "eth1"), "dfd202f5-562f-5f07-8f2a-a7717756fb70", "0523c0a1-5f5e-5603-bcf2-68155d5d322e")
	}
	tests := []struct {
		name string
		want []Keyfile
	}{
		{"a-static-ipv4", []Keyfile{{"eth0.nmconnection", []byte(refA)}}},
		{"b-bond-active-backup", []Keyfile{{"bond0.nmconnection", []byte(refBBond)}, {"eth0.nmconnection", []byte(refBPort)}, {"eth1.nmconnection", []byte(port1(refBPort))}}},
		{"b2-bond-undefined-ports", []Keyfile{{"bond0.nmconnection", []byte(refBBond)}, {"eth0.nmconnection", []byte(refBPort)}, {"eth1.nmconnection", []byte(port1(refBPort))}}},
		{"c-vlan-over-ethernet", []Keyfile{{"eth0.nmconnection", []byte(refCParent)}, {"eth0.100.nmconnection", []byte(refCVLAN)}}},
		{"d-dhcp-dual-stack", []Keyfile{{"eth0.nmconnection", []byte(refD)}}},
		{"e-bridge-dhcp", []Keyfile{{"br0.nmconnection", []byte(refEBridge)}, {"eth1.nmconnection", []byte(refEPort)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := render(t, tc.name)
			if diff := cmp.Diff(keyfileStrings(tc.want), keyfileStrings(got)); diff != "" {
				t.Errorf("Keyfiles(%s) differ from the reference (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

// TestInstallerFormatReference: after the installer's ini pass, file (a)
// differs only by autoconnect-priority=1 after uuid= and a final blank line.
func TestInstallerFormatReference(t *testing.T) {
	got := InstallerFormat(Keyfile{Name: "eth0.nmconnection", Data: []byte(refA)})
	want := strings.ReplaceAll(refA, "uuid=dfd202f5-562f-5f07-8f2a-a7717756fb70\n", "uuid=dfd202f5-562f-5f07-8f2a-a7717756fb70\nautoconnect-priority=1\n") + "\n"
	if got.Name != "eth0.nmconnection" || string(got.Data) != want {
		t.Errorf("InstallerFormat(a) = %s\n%s\nwant\n%s", got.Name, got.Data, want)
	}
}

func TestInstallerFormatCases(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"autoconnect replaced in place", "[connection]\nautoconnect=false\nid=x\n\n[ipv4]\nmethod=auto\n",
			"[connection]\nautoconnect=true\nid=x\nautoconnect-priority=1\n\n[ipv4]\nmethod=auto\n\n"},
		{"priority replaced in place", "[connection]\nautoconnect-priority=5\nid=x\n",
			"[connection]\nautoconnect-priority=1\nid=x\nautoconnect=true\n\n"},
		{"empty section kept", "[connection]\nid=x\n\n[bridge-port]\n",
			"[connection]\nid=x\nautoconnect=true\nautoconnect-priority=1\n\n[bridge-port]\n\n"},
		{"semicolons survive", "[connection]\nid=x\n\n[ipv4]\ndns=192.0.2.1;192.0.2.2;\n",
			"[connection]\nid=x\nautoconnect=true\nautoconnect-priority=1\n\n[ipv4]\ndns=192.0.2.1;192.0.2.2;\n\n"},
		{"no connection section", "[ipv4]\nmethod=auto\n",
			"[ipv4]\nmethod=auto\n\n[connection]\nautoconnect=true\nautoconnect-priority=1\n\n"},
		{"spaces around equals", "[connection]\nid = x\n",
			"[connection]\nid=x\nautoconnect=true\nautoconnect-priority=1\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := InstallerFormat(Keyfile{Name: "x.nmconnection", Data: []byte(tc.in)})
			if diff := cmp.Diff(tc.want, string(got.Data)); diff != "" {
				t.Errorf("InstallerFormat(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func keyfileStrings(kfs []Keyfile) []string {
	var out []string
	for _, k := range kfs {
		out = append(out, "### "+k.Name+"\n"+string(k.Data))
	}
	return out
}
