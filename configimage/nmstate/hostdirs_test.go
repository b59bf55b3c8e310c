package nmstate

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/configimage/report"
)

func staticHost(ip string) string {
	return "interfaces:\n- name: eth0\n  type: ethernet\n  state: up\n  ipv4:\n    enabled: true\n    address:\n    - ip: " + ip + "\n      prefix-length: 24\n"
}

func TestMACInterfaceINI(t *testing.T) {
	got := string(MACInterfaceINI([]NIC{{"52:54:01:bb:bb:b1", "eth1"}, {"52:54:01:AA:aa:a1", "eth0"}}))
	// As typed (case kept), sorted as whole lines, no final newline.
	if want := "52:54:01:AA:aa:a1=eth0\n52:54:01:bb:bb:b1=eth1"; got != want {
		t.Errorf("MACInterfaceINI = %q, want %q", got, want)
	}
	if got := MACInterfaceINI(nil); len(got) != 0 {
		t.Errorf("MACInterfaceINI(nil) = %q, want empty", got)
	}
}

func TestHostDirsOrder(t *testing.T) {
	// agent-config order: .81 first; the installer sorts by the JSON text,
	// where "192.168.111.80" < "192.168.111.81", so .80 becomes host0.
	hosts := []Host{
		{NetworkYAML: staticHost("192.168.111.81"), NICs: []NIC{{"52:54:00:00:00:81", "eth0"}}},
		{NetworkYAML: staticHost("192.168.111.80"), NICs: []NIC{{"52:54:00:00:00:80", "eth0"}}},
		// Same document twice: the MAC map decides.
		{NetworkYAML: "interfaces: [{name: eth0, type: ethernet, ipv4: {enabled: true, dhcp: true}}]", NICs: []NIC{{"52:54:00:00:00:b2", "eth0"}}},
		{NetworkYAML: "interfaces: [{name: eth0, type: ethernet, ipv4: {enabled: true, dhcp: true}}]", NICs: []NIC{{"52:54:00:00:00:b1", "eth0"}}},
	}
	dirs, err := HostDirs(hosts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range dirs {
		var names []string
		var ini string
		for _, f := range d.Files {
			names = append(names, f.Name)
			if f.Name == "mac_interface.ini" {
				ini = string(f.Data)
			}
		}
		got = append(got, d.Name+" "+strings.Join(names, ",")+" "+ini)
	}
	// {"interfaces":[{"ipv4":{"address":… sorts before {"interfaces":[{"ipv4":{"dhcp":…
	want := []string{
		"host0 eth0.nmconnection,mac_interface.ini 52:54:00:00:00:80=eth0",
		"host1 eth0.nmconnection,mac_interface.ini 52:54:00:00:00:81=eth0",
		"host2 eth0.nmconnection,mac_interface.ini 52:54:00:00:00:b1=eth0",
		"host3 eth0.nmconnection,mac_interface.ini 52:54:00:00:00:b2=eth0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HostDirs (-want +got):\n%s", diff)
	}
	kf := string(dirs[0].Files[0].Data)
	if !strings.Contains(kf, "uuid=dfd202f5-562f-5f07-8f2a-a7717756fb70\nautoconnect-priority=1\n") || !strings.HasSuffix(kf, "\n\n") {
		t.Errorf("host0 keyfile is not installer-formatted:\n%s", kf)
	}
	if !strings.Contains(kf, "address0=192.168.111.80/24\n") {
		t.Errorf("host0 keyfile is not the .80 host's:\n%s", kf)
	}
}

func TestHostDirsErrors(t *testing.T) {
	good := staticHost("192.0.2.1")
	tests := []struct {
		name  string
		hosts []Host
		want  []string
	}{
		{"empty YAML", []Host{{NetworkYAML: good, NICs: []NIC{{"52:54:00:00:00:01", "eth0"}}}, {NetworkYAML: " \n", NICs: []NIC{{"52:54:00:00:00:02", "eth0"}}}},
			[]string{"host 1 (MAC 52:54:00:00:00:02): cannot generate configuration with an empty host YAML"}},
		{"duplicate MAC", []Host{{NetworkYAML: good, NICs: []NIC{{"52:54:00:00:00:01", "eth0"}, {"52:54:00:00:00:01", "eth1"}}}},
			[]string{"host 0 (MAC 52:54:00:00:00:01): MACs and Interfaces for host 0 must be unique"}},
		{"duplicate MAC in another case", []Host{{NetworkYAML: good, NICs: []NIC{{"52:54:00:00:00:aa", "eth0"}, {"52:54:00:00:00:AA", "eth1"}}}},
			[]string{"host 0 (MAC 52:54:00:00:00:aa): MACs and Interfaces for host 0 must be unique"}},
		{"duplicate name", []Host{{NetworkYAML: good, NICs: []NIC{{"52:54:00:00:00:01", "eth0"}, {"52:54:00:00:00:02", "eth0"}}}},
			[]string{"host 0 (MAC 52:54:00:00:00:01): MACs and Interfaces for host 0 must be unique"}},
		{"every host and problem reported", []Host{
			{NetworkYAML: staticHost("192.0.2.300") + "  mtu: x\n", NICs: []NIC{{"52:54:00:00:00:01", "eth0"}}},
			{NetworkYAML: "interfaces: []", NICs: []NIC{{"52:54:00:00:00:02", "eth0"}}},
		}, []string{
			`host 0 (MAC 52:54:00:00:00:01): invalid network YAML: 8:11: interfaces[0].ipv4.address[0].ip: invalid IP address "192.0.2.300"`,
			`host 0 (MAC 52:54:00:00:00:01): invalid network YAML: 10:8: interfaces[0].mtu: invalid value: string "x", expected u32 (0 to 4294967295)`,
			"host 1 (MAC 52:54:00:00:00:02): render keyfiles: nmstate generated an empty NetworkManager config file content",
		}},
		{"warnings left out", []Host{{NetworkYAML: "hostname: {config: node0}\n" + staticHost("192.0.2.300"), NICs: []NIC{{"52:54:00:00:00:01", "eth0"}}}},
			[]string{`host 0 (MAC 52:54:00:00:00:01): invalid network YAML: 9:11: interfaces[0].ipv4.address[0].ip: invalid IP address "192.0.2.300"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dirs, err := HostDirs(tc.hosts)
			if err == nil {
				t.Fatalf("HostDirs = %d dirs, want an error", len(dirs))
			}
			if diff := cmp.Diff(tc.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("HostDirs error (-want +got):\n%s", diff)
			}
			var inv *report.Invalid
			if strings.Contains(tc.name, "problem") && (!errors.As(err, &inv) || len(inv.Entries) != 2) {
				t.Errorf("errors.As(%v, *report.Invalid) = %v, want the document's two problems", err, inv)
			}
		})
	}
}

func TestCompactJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{"b: yes\na: [1, \"x<\", 2.5, null]\n", `{"a":[1,"x\u003c",2.5,null],"b":true}`},
		{`{"z": 1, "a": {"c": "on", "b": off}}`, `{"a":{"b":false,"c":"on"},"z":1}`},
		{"interfaces:\n- name: eth0\n  mac-address: 52:54:00:00:00:01\n", `{"interfaces":[{"mac-address":"52:54:00:00:00:01","name":"eth0"}]}`},
	}
	for _, tc := range tests {
		got, err := compactJSON([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("compactJSON(%q) = %s, %v, want %s", tc.in, got, err, tc.want)
		}
	}
}
