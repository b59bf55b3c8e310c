package tui

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func TestParseValidations(t *testing.T) {
	tests := []struct {
		name    string
		info    string
		want    []validation
		wantErr bool
	}{
		{"empty", "", nil, false},
		{"categories in order, entries as listed",
			`{"operators":[{"id":"lso-requirements-satisfied","status":"success","message":"lso is disabled"}],` +
				`"network":[{"id":"connected","status":"success","message":"Host is connected"},{"id":"ntp-synced","status":"failure","message":"no NTP"}],` +
				`"zeta":[{"id":"z","status":"pending","message":"later"}],` +
				`"hardware":[{"id":"has-memory-for-role","status":"failure","message":"Require at least 16.00 GiB RAM"}]}`,
			[]validation{
				{"hardware", "has-memory-for-role", valFailure, "Require at least 16.00 GiB RAM"},
				{"network", "connected", valSuccess, "Host is connected"},
				{"network", "ntp-synced", valFailure, "no NTP"},
				{"operators", "lso-requirements-satisfied", valSuccess, "lso is disabled"},
				{"zeta", "z", valPending, "later"},
			}, false},
		{"not an object", `["x"]`, nil, true},
		{"truncated", `{"network":[`, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseValidations(tc.info)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseValidations(%q) error = %v, want error %v", tc.info, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseValidations(%q) (-want +got):\n%s", tc.info, diff)
			}
		})
	}
}

func TestGroupValidations(t *testing.T) {
	vals := []validation{
		{"hardware", "a", valSuccess, ""},
		{"hardware", "b", valDisabled, ""},
		{"hardware", "c", valPending, ""},
		{"network", "d", valSuccess, ""},
		{"network", "e", valError, ""},
		{"network", "f", valFailure, ""},
		{"operators", "g", valSuccess, ""},
	}
	got := groupValidations(vals)
	var ids []string
	for _, g := range got {
		ids = append(ids, g.Category+":")
		for _, v := range g.Items {
			ids = append(ids, v.ID)
		}
	}
	want := []string{"network:", "e", "f", "d", "hardware:", "c", "a", "b", "operators:", "g"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("groupValidations order (-want +got):\n%s", diff)
	}
}

func TestValidationLine(t *testing.T) {
	tests := []struct {
		v      validation
		withID bool
		want   string
	}{
		{validation{"hardware", "has-memory-for-role", valFailure, "Require more"}, false, "✖ Require more"},
		{validation{"hardware", "has-memory-for-role", valFailure, "Require more"}, true, "✖ has-memory-for-role: Require more"},
		{validation{"network", "connected", valSuccess, "Host is connected"}, true, "✓ connected: Host is connected"},
		{validation{"network", "api-vips-valid", valPending, "not verified yet"}, false, "… not verified yet"},
		{validation{"network", "x", valError, "Bad CIDR"}, false, "✖ error, Bad CIDR"},
		{validation{"network", "x", valDisabled, ""}, true, "- x: disabled"},
		{validation{"network", "no-message", valFailure, ""}, false, "✖ no-message"},
	}
	for _, tc := range tests {
		if got := validationLine(tc.v, tc.withID); got != tc.want {
			t.Errorf("validationLine(%+v, %v) = %q, want %q", tc.v, tc.withID, got, tc.want)
		}
	}
}

func TestProgressBar(t *testing.T) {
	tests := []struct {
		pct   int64
		width int
		mono  bool
		want  string
	}{
		{0, 10, false, "[░░░░░░░░░░]   0%"},
		{60, 10, false, "[██████░░░░]  60%"},
		{100, 10, false, "[██████████] 100%"},
		{59, 10, true, "[#####-----]  59%"},
		{150, 4, true, "[####] 100%"},
		{-3, 4, true, "[----]   0%"},
	}
	for _, tc := range tests {
		if got := progressBar(tc.pct, tc.width, tc.mono); got != tc.want {
			t.Errorf("progressBar(%d, %d, %v) = %q, want %q", tc.pct, tc.width, tc.mono, got, tc.want)
		}
	}
}

func TestSizes(t *testing.T) {
	bin := []struct {
		b    int64
		want string
	}{
		{0, ""}, {512 << 20, "512 MiB"}, {8 * gib, "8 GiB"}, {7*gib + gib/2, "7.5 GiB"}, {64 * gib, "64 GiB"}, {15*gib + 800<<20, "16 GiB"},
	}
	for _, tc := range bin {
		if got := binaryBytes(tc.b); got != tc.want {
			t.Errorf("binaryBytes(%d) = %q, want %q", tc.b, got, tc.want)
		}
	}
	dec := []struct {
		b    int64
		want string
	}{
		{0, ""}, {8e8, "800 MB"}, {120e9, "120 GB"}, {480103981056, "480 GB"}, {1.92e12, "1.9 TB"},
	}
	for _, tc := range dec {
		if got := decimalBytes(tc.b); got != tc.want {
			t.Errorf("decimalBytes(%d) = %q, want %q", tc.b, got, tc.want)
		}
	}
}

func TestHostNameAndRole(t *testing.T) {
	inv := &wire.Inventory{Hostname: "localhost-inv"}
	tests := []struct {
		name     string
		h        *wire.Host
		inv      *wire.Inventory
		wantName string
		wantRole string
	}{
		{"requested name wins", &wire.Host{ID: idMaster0, RequestedHostname: "master-0", Role: wire.HostRoleMaster}, inv, "master-0", "master"},
		{"inventory name", &wire.Host{ID: idMaster0, Role: wire.HostRoleWorker}, inv, "localhost-inv", "worker"},
		{"id prefix", &wire.Host{ID: idMaster0, Role: wire.HostRoleAutoAssign}, nil, "8d2c6a10", "auto"},
		{"short id", &wire.Host{ID: "abc"}, nil, "abc", "auto"},
		{"bootstrap", &wire.Host{ID: idMaster0, Role: wire.HostRoleMaster, Bootstrap: true}, nil, "8d2c6a10", "bootstrap"},
		{"suggested role", &wire.Host{ID: idMaster0, Role: wire.HostRoleAutoAssign, SuggestedRole: wire.HostRoleMaster}, nil, "8d2c6a10", "master"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := hostName(tc.h, tc.inv); got != tc.wantName {
				t.Errorf("hostName = %q, want %q", got, tc.wantName)
			}
			if got := hostRole(tc.h); got != tc.wantRole {
				t.Errorf("hostRole = %q, want %q", got, tc.wantRole)
			}
		})
	}
}

func TestInstallDisk(t *testing.T) {
	ok := &wire.DiskInstallationEligibility{Eligible: true}
	no := &wire.DiskInstallationEligibility{NotEligibleReasons: []string{"too small"}}
	inv := &wire.Inventory{Disks: []*wire.Disk{
		{ID: "by-id/a", Path: "/dev/sda", SizeBytes: 200e9, InstallationEligibility: ok},
		{ID: "by-id/b", Path: "/dev/sdb", SizeBytes: 900e9, InstallationEligibility: ok},
		{ID: "by-id/c", Path: "/dev/sdc", SizeBytes: 4e12, InstallationEligibility: no},
	}}
	tests := []struct {
		name string
		h    *wire.Host
		inv  *wire.Inventory
		want string // the disk's path, "" for none
	}{
		{"chosen by id", &wire.Host{InstallationDiskID: "by-id/a", InstallationDiskPath: "/dev/sdb"}, inv, "/dev/sda"},
		{"chosen by path", &wire.Host{InstallationDiskPath: "/dev/sda"}, inv, "/dev/sda"},
		{"biggest eligible", &wire.Host{}, inv, "/dev/sdb"},
		{"none eligible", &wire.Host{}, &wire.Inventory{Disks: []*wire.Disk{{Path: "/dev/sdc", InstallationEligibility: no}}}, ""},
		{"no inventory", &wire.Host{}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if d := installDisk(tc.h, tc.inv); d != nil {
				got = d.Path
			}
			if got != tc.want {
				t.Errorf("installDisk = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHostColumns(t *testing.T) {
	tests := []struct {
		width      int
		installing bool
		want       []string
	}{
		{78, false, []string{"", "HOST", "ROLE", "STATUS", "CPU", "RAM", "DISK", "CHECKS"}},
		{78, true, []string{"", "HOST", "ROLE", "STATUS/STAGE", "PROGRESS", "INSTALL"}},
		{118, false, []string{"", "HOST", "ROLE", "STATUS", "STAGE", "PROGRESS", "CPU", "RAM", "DISK", "CHECKS"}},
		{118, true, []string{"", "HOST", "ROLE", "STATUS", "STAGE", "PROGRESS", "CPU", "RAM", "DISK", "INSTALL"}},
	}
	for _, tc := range tests {
		got := hostHeaders(hostColumns(tc.width, tc.installing))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("hostHeaders(hostColumns(%d, %v)) (-want +got):\n%s", tc.width, tc.installing, diff)
		}
	}
}

func TestInstallingPhase(t *testing.T) {
	started := wire.DateTime(fixtureTime)
	tests := []struct {
		c    *wire.Cluster
		want bool
	}{
		{nil, false},
		{&wire.Cluster{Status: wire.ClusterStatusReady}, false},
		{&wire.Cluster{Status: wire.ClusterStatusPreparingForInstallation}, false},
		{&wire.Cluster{Status: wire.ClusterStatusInstalling}, true},
		{&wire.Cluster{Status: wire.ClusterStatusFinalizing}, true},
		{&wire.Cluster{Status: wire.ClusterStatusInstalled}, true},
		{&wire.Cluster{Status: wire.ClusterStatusError}, false},
		{&wire.Cluster{Status: wire.ClusterStatusError, InstallStartedAt: started}, true},
	}
	for _, tc := range tests {
		if got := installing(tc.c); got != tc.want {
			t.Errorf("installing(%+v) = %v, want %v", tc.c, got, tc.want)
		}
	}
}

func TestHostRow(t *testing.T) {
	s := failingSnapshot()
	hosts := parseHosts(s, nil)
	wide := hostColumns(118, false)
	narrowInstall := hostColumns(78, true)
	cells := func(row []hostCell) []string {
		var out []string
		for _, c := range row {
			out = append(out, c.Text)
		}
		return out
	}
	if got, want := cells(hostRow(hosts[0], s.Cluster, wide, s.ThisHost, false)),
		[]string{"*", "master-0", "master", "known", "", "", "16", "64 GiB", "480 GB", "✓"}; !cmp.Equal(got, want) {
		t.Errorf("master-0 wide row = %q, want %q", got, want)
	}
	row := hostRow(hosts[1], s.Cluster, wide, s.ThisHost, false)
	if got, want := cells(row), []string{"", "master-1", "master", "insufficient", "", "", "16", "8 GiB", "480 GB", "✖ 1"}; !cmp.Equal(got, want) {
		t.Errorf("master-1 wide row = %q, want %q", got, want)
	}
	if !row[3].Bad || !row[9].Bad {
		t.Errorf("master-1 status and failing cells are not marked bad: %+v", row)
	}

	is := installingSnapshot()
	inst := parseHosts(is, nil)
	if got, want := cells(hostRow(inst[2], is.Cluster, narrowInstall, "", true)),
		[]string{"", "master-2", "master", "Writing image to disk", "[##------]  37%", "…"}; !cmp.Equal(got, want) {
		t.Errorf("master-2 narrow installing row = %q, want %q", got, want)
	}
	noInv := parsedHost{Host: &wire.Host{ID: "x", Status: wire.HostStatusDiscovering}, Name: "x"}
	if got, want := cells(hostRow(noInv, nil, wide, "", false)), []string{"", "x", "auto", "discovering", "", "", "", "", "", ""}; !cmp.Equal(got, want) {
		t.Errorf("discovering host row = %q, want %q", got, want)
	}
}

// TestInstallColumn: after a failed installation the INSTALL column tells
// the host that failed from the hosts that never joined, whatever their
// validations say (worker-1's NTP warning is no install failure).
func TestInstallColumn(t *testing.T) {
	for _, tc := range []struct {
		name string
		snap Snapshot
		want map[string]hostCell
	}{
		{"failed", failedSnapshot(), map[string]hostCell{
			"master-0": {"✖ failed", true}, "master-1": {"✖ not joined", true}, "master-2": {"✓ joined", false},
			"worker-0": {"✖ not joined", true}, "worker-1": {"✖ not joined", true},
		}},
		{"installed", installedSnapshot(), map[string]hostCell{
			"master-0": {"✓ done", false}, "master-1": {"✓ done", false}, "master-2": {"✓ done", false},
			"worker-0": {"✓ done", false}, "worker-1": {"✓ done", false},
		}},
		{"before the installation", healthySnapshot(), map[string]hostCell{
			"master-0": {}, "master-1": {}, "master-2": {}, "worker-0": {}, "worker-1": {},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]hostCell{}
			for _, h := range parseHosts(tc.snap, nil) {
				got[h.Name] = installCell(h.Host, tc.snap.Cluster)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("installCell (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHostNameAndProgressText: the names and progress phrases the
// sandbox's lines use: the hostname as soon as the inventory has one, the
// stage apart from its info.
func TestHostNameAndProgressText(t *testing.T) {
	inv := mustJSON(&wire.Inventory{Hostname: "master-1"})
	for _, tc := range []struct {
		h    *wire.Host
		want string
	}{
		{&wire.Host{ID: idMaster1, RequestedHostname: "m1", Inventory: inv}, "m1"},
		{&wire.Host{ID: idMaster1, Inventory: inv}, "master-1"},
		{&wire.Host{ID: idMaster1}, "8d2c6a10"},
	} {
		if got := HostName(tc.h); got != tc.want {
			t.Errorf("HostName(%+v) = %q, want %q", tc.h, got, tc.want)
		}
	}
	for _, tc := range []struct {
		p    *wire.HostProgressInfo
		want string
	}{
		{nil, ""},
		{&wire.HostProgressInfo{CurrentStage: wire.HostStageRebooting, ProgressInfo: "rebooting in 1ms"}, "Rebooting: rebooting in 1ms"},
		{&wire.HostProgressInfo{CurrentStage: wire.HostStageDone, ProgressInfo: "the node is Ready (simulated)"}, "Done: the node is Ready (simulated)"},
		{&wire.HostProgressInfo{CurrentStage: wire.HostStageJoined}, "Joined"},
	} {
		if got := ProgressText(tc.p); got != tc.want {
			t.Errorf("ProgressText(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestParseHostsSortedAndCached(t *testing.T) {
	s := healthySnapshot()
	s.Hosts[0], s.Hosts[4] = s.Hosts[4], s.Hosts[0]
	c := newParseCache()
	hosts := parseHosts(s, c)
	var names []string
	for _, h := range hosts {
		names = append(names, h.Name)
	}
	if want := []string{"master-0", "master-1", "master-2", "worker-0", "worker-1"}; !cmp.Equal(names, want) {
		t.Errorf("parseHosts names = %q, want %q", names, want)
	}
	again := parseHosts(s, c)
	if hosts[0].Inventory != again[0].Inventory {
		t.Errorf("parseHosts parsed an unchanged inventory again")
	}
	s.Hosts = s.Hosts[:1]
	parseHosts(s, c)
	if len(c.inv) != 1 {
		t.Errorf("parse cache holds %d inventories after hosts left, want 1", len(c.inv))
	}
}

func TestHostDetail(t *testing.T) {
	s := failingSnapshot()
	hosts := parseHosts(s, nil)
	got := strings.Join(hostDetail(hosts[1], s.ThisHost, true), "\n")
	for _, want := range []string{
		"master-1\nRole: master   Status: insufficient\n",
		"Validations\n  hardware\n    ✖ has-memory-for-role: " + memoryFailure + "\n    ✓ has-inventory",
		"  CPU: Intel(R) Xeon(R) Gold 6338N CPU @ 2.20GHz, 16 cores (x86_64)",
		"  RAM: 8 GiB",
		"    eno1  b8:ce:f6:12:34:51  mtu 1500  up  192.168.111.21/24, fd2e:6f44:5dd8::21/64",
		"  ✓ sda      SSD   480 GB  eligible (installation disk)",
		"  ✖ sdb      SSD     8 GB  not eligible: Disk is too small (disk only has 8.0 GB, but 100 GB are required); Disk appears to be an installation media",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hostDetail(master-1) lacks %q; it reads:\n%s", want, got)
		}
	}
	if self := strings.Join(hostDetail(hosts[0], s.ThisHost, true), "\n"); !strings.HasPrefix(self, "master-0 (this host)\n") {
		t.Errorf("hostDetail(this host) starts %q", self[:40])
	}
	bare := strings.Join(hostDetail(parsedHost{Host: &wire.Host{ID: "x", Status: wire.HostStatusDiscovering}, Name: "x"}, "", false), "\n")
	for _, want := range []string{"Role: auto (auto-assigned)   Status: discovering", "  … none reported yet", "Inventory\n  … not received yet"} {
		if !strings.Contains(bare, want) {
			t.Errorf("hostDetail(discovering) lacks %q; it reads:\n%s", want, bare)
		}
	}
}

func TestEventLines(t *testing.T) {
	names := map[string]string{idMaster1: "master-1"}
	unknown := "0123456789abcdef"
	events := []*wire.Event{
		fixtureEvent(60, wire.EventSeverityInfo, "", "Updated status of the cluster to ready"),
		fixtureEvent(30, wire.EventSeverityWarning, idMaster1, "Host master-1: validation failing\nsecond line"),
		nil,
		fixtureEvent(0, wire.EventSeverityError, unknown, "gone host"),
	}
	want := []string{
		"09:25:53 info              Updated status of the cluster to ready",
		"09:26:23 warning  master-1 Host master-1: validation failing second line",
		"09:26:53 error    01234567 gone host",
	}
	if diff := cmp.Diff(want, eventLines(events, names)); diff != "" {
		t.Errorf("eventLines (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"09:25:53 info     Updated status of the cluster to ready"}, eventLines(events[:1], names)); diff != "" {
		t.Errorf("eventLines without host events (-want +got):\n%s", diff)
	}
}

func TestWrapText(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		width int
		want  []string
	}{
		{"fits", []string{"short line"}, 20, []string{"short line"}},
		{"no width", []string{"a long line that stays"}, 0, []string{"a long line that stays"}},
		{"hanging indent", []string{"✖ api vips <192.168.122.5> does not belong"}, 20,
			[]string{"✖ api vips", "  <192.168.122.5>", "  does not belong"}},
		{"keeps inner spaces", []string{"    Role: x   Status: y   Stage: z"}, 22,
			[]string{"    Role: x   Status:", "      y   Stage: z"}},
		{"cuts long words", []string{"abcdefghijklmnop"}, 6, []string{"abcdef", "  ghij", "  klmn", "  op"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := wrapText(tc.lines, tc.width)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("wrapText(%q, %d) (-want +got):\n%s", tc.lines, tc.width, diff)
			}
			for _, l := range got {
				if n := len([]rune(l)); tc.width > 0 && n > tc.width {
					t.Errorf("line %q is %d cells, wider than %d", l, n, tc.width)
				}
			}
		})
	}
}

func TestClusterHeader(t *testing.T) {
	c := fixtureCluster(wire.ClusterStatusPreparingForInstallation, "", 10, nil, nil)
	if got, want := clusterHeader(c, true), "Status: preparing-for-installation [##------------------]  10%"; got != want {
		t.Errorf("clusterHeader = %q, want %q", got, want)
	}
	if got := clusterHeader(nil, false); got != "No cluster registered yet" {
		t.Errorf("clusterHeader(nil) = %q", got)
	}
	lines := clusterValidationLines(parseClusterValidations(failingSnapshot().Cluster))
	want := []string{"✖ api vips <192.168.122.5> does not belong to machine-network-cidr <192.168.111.0/24>",
		"✖ The cluster has hosts that are not ready to install."}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("clusterValidationLines (-want +got):\n%s", diff)
	}
}
