package nmstate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hostFiles renders a document and adds its mac_interface.ini, as one host
// directory holds them.
func hostFiles(t *testing.T, doc string, nics []NIC) []Keyfile {
	t.Helper()
	s, probs := Parse([]byte(doc))
	if s == nil {
		t.Fatalf("Parse: %v", probs)
	}
	kfs, err := s.Keyfiles()
	if err != nil {
		t.Fatal(err)
	}
	return append(kfs, Keyfile{Name: "mac_interface.ini", Data: MACInterfaceINI(nics)})
}

// summary is "name: key=value …" for the keys a test looks at, in file
// order (a [vlan] id shows up as a second id=).
func summary(kfs []Keyfile, keys ...string) []string {
	var out []string
	for _, k := range kfs {
		var vals []string
		for _, line := range strings.Split(string(k.Data), "\n") {
			key, _, _ := strings.Cut(line, "=")
			for _, want := range keys {
				if key == want {
					vals = append(vals, line)
				}
			}
		}
		out = append(out, k.Name+": "+strings.Join(vals, " "))
	}
	return out
}

const vlanBondDoc = `interfaces:
- name: bond0
  type: bond
  link-aggregation: {mode: active-backup, port: [eth0, eth1]}
  ipv4: {enabled: false}
- name: eth0
  type: ethernet
- name: eth1
  type: ethernet
- name: vlan100
  type: vlan
  vlan: {base-iface: eth0, id: 100}
  ipv4: {enabled: true, dhcp: true}
- name: eth0.200
  type: vlan
  vlan: {base-iface: eth0, id: 200}
  ipv4: {enabled: true, dhcp: true}
`

func TestMatchHostRenames(t *testing.T) {
	files := hostFiles(t, vlanBondDoc, []NIC{{"52:54:00:aa:aa:01", "eth0"}, {"52:54:00:aa:aa:02", "eth1"}})
	local := map[string]string{"52:54:00:AA:AA:01": "ens3", "52:54:00:aa:aa:02": "ens4", "52:54:00:ff:ff:ff": "ens9"}
	matched, out, err := MatchHost(files, local)
	if err != nil || !matched {
		t.Fatalf("MatchHost = %v, %v, want a match", matched, err)
	}
	got := summary(out, "id", "interface-name", "master", "parent", "uuid")
	want := []string{
		"bond0.nmconnection: id=bond0 interface-name=bond0 uuid=925b4a95-2de0-5b2d-bcf5-8b684a7e9cb4",
		"ens3.nmconnection: id=ens3 interface-name=ens3 master=bond0 uuid=dfd202f5-562f-5f07-8f2a-a7717756fb70",
		"ens4.nmconnection: id=ens4 interface-name=ens4 master=bond0 uuid=0523c0a1-5f5e-5603-bcf2-68155d5d322e",
		// The UUIDs keep the logical names: the script does not touch them.
		"ens3.200.nmconnection: id=ens3.200 interface-name=ens3.200 uuid=" + uuid5("vlan://eth0.200") + " id=200 parent=ens3",
		"vlan100.nmconnection: id=vlan100 interface-name=vlan100 uuid=" + uuid5("vlan://vlan100") + " id=100 parent=ens3",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MatchHost output (-want +got):\n%s", diff)
	}
}

func TestMatchHostTrimsVLANNames(t *testing.T) {
	doc := "interfaces:\n" +
		"- {name: eth0, type: ethernet, ipv4: {enabled: false}}\n" +
		"- {name: eth0.100, type: vlan, vlan: {base-iface: eth0, id: 100}, ipv4: {enabled: true, dhcp: true}}\n" +
		"- {name: eth0.1000, type: vlan, vlan: {base-iface: eth0, id: 1000}, ipv4: {enabled: true, dhcp: true}}\n"
	files := hostFiles(t, doc, []NIC{{"52:54:00:aa:aa:01", "eth0"}})
	matched, out, err := MatchHost(files, map[string]string{"52:54:00:aa:aa:01": "ens1f0np0123"})
	if err != nil || !matched {
		t.Fatalf("MatchHost = %v, %v, want a match", matched, err)
	}
	got := summary(out, "id", "interface-name", "parent")
	// ens1f0np0123.1000 is 17 characters: the NIC part loses 2; .100 loses 1.
	want := []string{
		"ens1f0np0123.nmconnection: id=ens1f0np0123 interface-name=ens1f0np0123",
		"ens1f0np012.100.nmconnection: id=ens1f0np012.100 interface-name=ens1f0np012.100 id=100 parent=ens1f0np0123",
		"ens1f0np01.1000.nmconnection: id=ens1f0np01.1000 interface-name=ens1f0np01.1000 id=1000 parent=ens1f0np0123",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MatchHost output (-want +got):\n%s", diff)
	}
	if nmcli, err := lookNmcli(); err == nil {
		for _, k := range out {
			id := parseIniText(string(k.Data))["connection"]["id"]
			if msg, err := nmcliLoad(t, nmcli, k.Data, id); err != nil {
				t.Errorf("nmcli rejects renamed %s: %v\n%s", k.Name, err, msg)
			}
		}
	}
}

func TestMatchHostCases(t *testing.T) {
	eth0 := Keyfile{Name: "eth0.nmconnection", Data: []byte("[connection]\nid=eth0\ninterface-name=eth0\n")}
	ini := func(s string) Keyfile { return Keyfile{Name: "mac_interface.ini", Data: []byte(s)} }
	tests := []struct {
		name      string
		files     []Keyfile
		local     map[string]string
		matched   bool
		names     []string
		errSubstr string
	}{
		{"no local MAC", []Keyfile{eth0, ini("52:54:00:aa:aa:01=eth0")}, map[string]string{"52:54:00:bb:bb:01": "ens3"}, false, nil, ""},
		{"MAC case differs (ini lower)", []Keyfile{eth0, ini("52:54:00:aa:aa:01=eth0")}, map[string]string{"52:54:00:AA:AA:01": "ens3"}, true, []string{"ens3.nmconnection"}, ""},
		{"MAC case differs (ini upper)", []Keyfile{eth0, ini("52:54:00:AA:AA:01=eth0")}, map[string]string{"52:54:00:aa:aa:01": "ens3"}, true, []string{"ens3.nmconnection"}, ""},
		{"logical NIC of another host kept", []Keyfile{eth0, {Name: "eth1.nmconnection", Data: []byte("[connection]\nid=eth1\n")}, ini("52:54:00:aa:aa:01=eth0\n52:54:00:aa:aa:02=eth1")},
			map[string]string{"52:54:00:aa:aa:01": "ens3"}, true, []string{"ens3.nmconnection", "eth1.nmconnection"}, ""},
		{"name clash", []Keyfile{eth0, {Name: "ens3.nmconnection", Data: []byte("[connection]\nid=ens3\n")}, ini("52:54:00:aa:aa:01=eth0")},
			map[string]string{"52:54:00:aa:aa:01": "ens3"}, true, nil, "connection file name ens3.nmconnection is already in use"},
		{"swapped names rename once", []Keyfile{eth0, {Name: "eth1.nmconnection", Data: []byte("[connection]\nid=eth1\ninterface-name=eth1\n")}, ini("52:54:00:aa:aa:01=eth0\n52:54:00:aa:aa:02=eth1")},
			map[string]string{"52:54:00:aa:aa:01": "eth1", "52:54:00:aa:aa:02": "eth0"}, true, []string{"eth1.nmconnection", "eth0.nmconnection"}, ""},
		{"no ini", []Keyfile{eth0}, map[string]string{"52:54:00:aa:aa:01": "ens3"}, false, nil, "mac_interface.ini is missing"},
		{"no keyfiles", []Keyfile{ini("52:54:00:aa:aa:01=eth0")}, map[string]string{"52:54:00:aa:aa:01": "ens3"}, false, nil, "no .nmconnection files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			matched, out, err := MatchHost(tc.files, tc.local)
			if tc.errSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSubstr) {
					t.Fatalf("MatchHost = %v, %v, want an error with %q", matched, err, tc.errSubstr)
				}
				return
			}
			if err != nil || matched != tc.matched {
				t.Fatalf("MatchHost = %v, %v, want %v", matched, err, tc.matched)
			}
			var names []string
			for _, k := range out {
				names = append(names, k.Name)
			}
			if diff := cmp.Diff(tc.names, names); diff != "" {
				t.Errorf("MatchHost names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchHostSwapRewritesContentOnce(t *testing.T) {
	files := []Keyfile{
		{Name: "eth0.nmconnection", Data: []byte("[connection]\nid=eth0\ninterface-name=eth0\n")},
		{Name: "eth1.nmconnection", Data: []byte("[connection]\nid=eth1\ninterface-name=eth1\n")},
		{Name: "mac_interface.ini", Data: []byte("52:54:00:aa:aa:01=eth0\n52:54:00:aa:aa:02=eth1")},
	}
	_, out, err := MatchHost(files, map[string]string{"52:54:00:aa:aa:01": "eth1", "52:54:00:aa:aa:02": "eth0"})
	if err != nil {
		t.Fatal(err)
	}
	got := summary(out, "id", "interface-name")
	want := []string{"eth1.nmconnection: id=eth1 interface-name=eth1", "eth0.nmconnection: id=eth0 interface-name=eth0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MatchHost (-want +got):\n%s", diff)
	}
}
