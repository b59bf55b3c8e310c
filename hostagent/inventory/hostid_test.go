package inventory

import (
	"errors"
	"testing"
)

// Vectors from the agent's own tests (src/scanners/machine_uuid_scanner_test.go)
// and md5sum: the ID of a board serial or a MAC is the MD5 of its text.
const (
	idOf123456789 = "856f4f9c-3c08-4d97-8ec7-ea0ad7d4cadf" // serial "123-456-789"
	idOfOther     = "6311ae17-c1ee-52b3-6e68-aaf4ad066387" // serial "Other"
	idOfMAC       = "5fbf9397-0231-3d13-9fba-46c95209335b" // MAC f8:75:a4:a4:00:fe
	testUUID      = "8a8f14ba-81b0-4a5f-a01c-e1e28c1470ba"
)

func dmiFiles(boardSerial, productUUID string) map[string]string {
	m := map[string]string{"sys/class/dmi/id/sys_vendor": "Acme\n"}
	if boardSerial != "" {
		m["sys/class/dmi/id/board_serial"] = boardSerial + "\n"
	}
	if productUUID != "" {
		m["sys/class/dmi/id/product_uuid"] = productUUID + "\n"
	}
	return m
}

// twoNICs are the agent test's interfaces: the lowest MAC is eth0's.
var twoNICs = merge(
	nicFiles("eth1", "f8:75:a4:a4:00:ff", "3"),
	nicFiles("eth0", "f8:75:a4:a4:00:fe", "2"),
	map[string]string{
		"sys/devices/virtual/net/lo/address": "00:00:00:00:00:00\n",
		"sys/devices/virtual/net/lo/type":    "772\n",
		"sys/class/net/lo":                   "->../../devices/virtual/net/lo",
	},
)

func TestHostID(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"board serial", dmiFiles("123-456-789", testUUID), idOf123456789},
		{"board serial Other", dmiFiles("Other", ""), idOfOther},
		{"serial wins over UUID and MAC", merge(dmiFiles("Other", testUUID), twoNICs), idOfOther},
		{"no board serial file", dmiFiles("", testUUID), testUUID},
		{"empty serial", merge(dmiFiles("", testUUID), map[string]string{"sys/class/dmi/id/board_serial": "\n"}), testUUID},
		{"placeholder unknown", dmiFiles("unknown", testUUID), testUUID},
		{"placeholder None (VMware)", dmiFiles("None", testUUID), testUUID},
		{"placeholder (none)", dmiFiles("(none)", testUUID), testUUID},
		{"placeholder dash", dmiFiles("-", testUUID), testUUID},
		{"placeholder BlueField board", dmiFiles("Unspecified Base Board Serial Number", testUUID), testUUID},
		{"placeholder BlueField system", dmiFiles("Unspecified System Serial Number", testUUID), testUUID},
		{"placeholder Default string", dmiFiles("Default string", testUUID), testUUID},
		{"placeholder Linode", dmiFiles("Not Specified", testUUID), testUUID},
		{"placeholder ProLiant Gen11", dmiFiles("PCA_number.ACC", testUUID), testUUID},
		{"placeholder OEM", dmiFiles("To be filled by O.E.M.", testUUID), testUUID},
		{"placeholder OEM other case", dmiFiles("TO BE FILLED BY O.E.M.", testUUID), testUUID},
		{"uppercase UUID is lowercased", dmiFiles("", "8A8F14BA-81B0-4A5F-A01C-E1E28C1470BA"), testUUID},
		{"zero UUID falls back to MAC", merge(dmiFiles("Default string", "00000000-0000-0000-0000-000000000000"), twoNICs), idOfMAC},
		{"Kaloom UUID falls back to MAC", merge(dmiFiles("Default string", "03000200-0400-0500-0006-000700080009"), twoNICs), idOfMAC},
		{"invalid UUID falls back to MAC", merge(dmiFiles("Not Specified", "Not Settable"), twoNICs), idOfMAC},
		{"no DMI at all", twoNICs, idOfMAC},
		{"bond slave's permanent MAC", merge(nicFiles("eth0", "f8:75:a4:a4:00:ff", "2"), map[string]string{
			"sys/devices/pci0000:00/0000:00:02.0/net/eth0/bonding_slave/perm_hwaddr": "f8:75:a4:a4:00:fe\n",
		}), idOfMAC},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := HostID(Options{Root: writeRoot(t, tc.files)})
			if err != nil {
				t.Fatalf("HostID: %v", err)
			}
			if got != tc.want {
				t.Errorf("HostID = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHostIDNothingToUse(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"empty root": {},
		"only loopback and placeholders": merge(dmiFiles("default string", "00000000-0000-0000-0000-000000000000"), map[string]string{
			"sys/devices/virtual/net/lo/address": "00:00:00:00:00:00\n",
			"sys/class/net/lo":                   "->../../devices/virtual/net/lo",
		}),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := HostID(Options{Root: writeRoot(t, files)})
			if !errors.Is(err, ErrNoHostID) {
				t.Errorf("HostID = %q, %v; want ErrNoHostID", got, err)
			}
		})
	}
}

func TestHostIDOfCommittedTrees(t *testing.T) {
	want := map[string]string{
		"master-0":      "012bcc2b-28b8-b074-a644-28bbcb38eee9", // md5 of the Dell board serial
		"master-1":      "0b85f8f9-0dff-fb84-d0f1-ad686a83c210",
		"master-2":      "37059736-d6ce-7930-c9f6-dadb861cc5e6",
		"worker-0":      "80775571-4043-813e-09b6-d180d79b9990",
		"worker-1":      "9f1e2d3c-4b5a-4697-8877-665544332211", // no board serial: the SMBIOS UUID
		"undersized":    "80613719-7bee-abf8-2d9e-a80dfaca0dbc",
		"smalldisk":     "34393350-3831-5a43-3244-315130433131", // PCA_number.ACC: the SMBIOS UUID
		"placeholder-a": "7d3c1a58-9f2e-4b61-8e0a-5c4d2b1a0f01", // To be filled by O.E.M.: the SMBIOS UUID
		"placeholder-b": "7d3c1a58-9f2e-4b61-8e0a-5c4d2b1a0f02",
		"mounted":       "0e49e0ac-f4de-24d1-9e3d-031597dbde03",
	}
	seen := map[string]string{}
	for _, name := range hwTrees(t) {
		t.Run(name, func(t *testing.T) {
			root := hwTree(t, name)
			first, err := HostID(Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			again, err := HostID(Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			if first != again {
				t.Errorf("HostID(%s) = %q then %q, want stable", name, first, again)
			}
			if first != want[name] {
				t.Errorf("HostID(%s) = %q, want %q", name, first, want[name])
			}
			if other, dup := seen[first]; dup {
				t.Errorf("HostID(%s) = %q, same as %s", name, first, other)
			}
			seen[first] = name
		})
	}
}

func TestCanonicalUUID(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"8A8F14BA-81B0-4A5F-A01C-E1E28C1470BA", testUUID, true},
		{"{8a8f14ba-81b0-4a5f-a01c-e1e28c1470ba}", testUUID, true},
		{"urn:uuid:8a8f14ba-81b0-4a5f-a01c-e1e28c1470ba", testUUID, true},
		{"8a8f14ba81b04a5fa01ce1e28c1470ba", testUUID, true},
		{"8a8f14ba-81b0-4a5f-a01c-e1e28c1470b", "", false},
		{"8a8f14ba_81b0-4a5f-a01c-e1e28c1470ba", "", false},
		{"8a8f14ba-81b0-4a5f-a01c-e1e28c1470bg", "", false},
		{"Not Settable", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		got, ok := canonicalUUID(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("canonicalUUID(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
