package validation

import (
	"strings"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

func TestDefaultRequirements(t *testing.T) {
	r, err := DefaultRequirements()
	if err != nil {
		t.Fatalf("DefaultRequirements() error = %v", err)
	}
	tests := []struct {
		version string
		role    wire.HostRole
		sno     bool
		cpu     int64
		ramMiB  int64
		diskGB  int64
	}{
		{"4.18.0", wire.HostRoleMaster, false, 4, 16384, 100},
		{"4.18.0", wire.HostRoleBootstrap, false, 4, 16384, 100},
		{"4.18.0", wire.HostRoleArbiter, false, 2, 8192, 50},
		{"4.18.0", wire.HostRoleWorker, false, 2, 8192, 100},
		{"4.18.0", wire.HostRoleAutoAssign, false, 2, 8192, 100},
		{"4.18.0", wire.HostRoleMaster, true, 8, 16384, 100},
		{"", wire.HostRoleMaster, true, 8, 16384, 100},
		{"4.21.9", wire.HostRoleMaster, true, 8, 16384, 100},
		// The 4.22 min_version entry lowers SNO cores and inherits the rest.
		{"4.22", wire.HostRoleMaster, true, 4, 16384, 100},
		{"4.22.0", wire.HostRoleMaster, true, 4, 16384, 100},
		{"4.22.0-ec.3", wire.HostRoleMaster, true, 4, 16384, 100},
		{"4.23.1", wire.HostRoleMaster, true, 4, 16384, 100},
		{"4.22.0", wire.HostRoleMaster, false, 4, 16384, 100},
		{"not-a-version", wire.HostRoleMaster, true, 8, 16384, 100},
	}
	for _, tc := range tests {
		t.Run(tc.version+"/"+string(tc.role), func(t *testing.T) {
			got := r.ForVersion(tc.version).ForRole(tc.role, tc.sno)
			if got.CPUCores != tc.cpu || got.RAMMiB != tc.ramMiB || got.DiskSizeGB != tc.diskGB {
				t.Errorf("ForVersion(%q).ForRole(%s, sno=%v) = %d cores %d MiB %d GB, want %d %d %d",
					tc.version, tc.role, tc.sno, got.CPUCores, got.RAMMiB, got.DiskSizeGB, tc.cpu, tc.ramMiB, tc.diskGB)
			}
		})
	}
	m := r.ForVersion("4.18").Master
	if m.NetworkLatencyThresholdMs == nil || *m.NetworkLatencyThresholdMs != 100 || m.PacketLossPercentage == nil || *m.PacketLossPercentage != 0 {
		t.Errorf("master latency/loss = %v/%v, want 100/0", m.NetworkLatencyThresholdMs, m.PacketLossPercentage)
	}
	if s := r.ForVersion("4.18").SNO; s.NetworkLatencyThresholdMs != nil {
		t.Errorf("SNO latency = %v, want none", *s.NetworkLatencyThresholdMs)
	}
}

func TestRequirementsMinimumAndUnbound(t *testing.T) {
	r, _ := DefaultRequirements()
	vr := r.ForVersion("4.18")
	if cpu, ram := vr.Minimum(false); cpu != 2 || ram != 8192 {
		t.Errorf("Minimum(false) = %d, %d, want 2, 8192", cpu, ram)
	}
	if cpu, ram := vr.Minimum(true); cpu != 2 || ram != 8192 {
		t.Errorf("Minimum(true) = %d, %d, want 2, 8192", cpu, ram)
	}
	if u := vr.Unbound(); u.DiskSizeGB != 50 {
		t.Errorf("Unbound().DiskSizeGB = %d, want 50 (arbiter)", u.DiskSizeGB)
	}
	edge := testInventory("dpu", 8, 16, "192.168.111.9/24")
	edge.CPU.Architecture = "aarch64"
	edge.SystemVendor.ProductName = "BlueField SoC"
	if got := vr.ForHost(&wire.Host{Role: wire.HostRoleWorker}, edge, false); got.DiskSizeGB != 15 {
		t.Errorf("edge worker disk = %d GB, want 15", got.DiskSizeGB)
	}
	if got := vr.ForHost(&wire.Host{Role: wire.HostRoleAutoAssign, SuggestedRole: wire.HostRoleMaster}, edge, false); got.CPUCores != 4 {
		t.Errorf("suggested master cores = %d, want 4", got.CPUCores)
	}
}

func TestParseRequirements(t *testing.T) {
	const def = `{"version":"default",
		"master":{"cpu_cores":4,"ram_mib":16384,"disk_size_gb":100},
		"worker":{"cpu_cores":2,"ram_mib":8192,"disk_size_gb":100},
		"sno":{"cpu_cores":8,"ram_mib":16384,"disk_size_gb":100}}`
	t.Run("exact entry wins and inherits", func(t *testing.T) {
		r, err := ParseRequirements([]byte(`[` + def + `,
			{"version":"4.20.1","worker":{"ram_mib":10000}},
			{"version":"4.20","match_type":"min_version","worker":{"cpu_cores":3}}]`))
		if err != nil {
			t.Fatal(err)
		}
		if w := r.ForVersion("4.20.1").Worker; w.RAMMiB != 10000 || w.CPUCores != 2 {
			t.Errorf("4.20.1 worker = %d cores %d MiB, want 2, 10000", w.CPUCores, w.RAMMiB)
		}
		if w := r.ForVersion("4.20.2").Worker; w.RAMMiB != 8192 || w.CPUCores != 3 {
			t.Errorf("4.20.2 worker = %d cores %d MiB, want 3, 8192", w.CPUCores, w.RAMMiB)
		}
		if a := r.ForVersion("4.19").Arbiter; a.CPUCores != 2 || a.RAMMiB != 8192 {
			t.Errorf("arbiter without entry = %+v, want the worker values", a)
		}
	})
	bad := []struct {
		name, json, want string
	}{
		{"no default", `[{"version":"4.18","master":{"cpu_cores":1,"ram_mib":1,"disk_size_gb":1}}]`, `"default" version entry is required`},
		{"duplicate", `[` + def + `,` + def + `]`, "duplicate version entry"},
		{"bad match type", `[` + def + `,{"version":"4.1","match_type":"max"}]`, "invalid match_type"},
		{"zero RAM", `[{"version":"default","master":{"cpu_cores":4,"ram_mib":0,"disk_size_gb":100},
			"worker":{"cpu_cores":2,"ram_mib":8192,"disk_size_gb":100},"sno":{"cpu_cores":8,"ram_mib":16384,"disk_size_gb":100}}]`,
			"RAM requirement must be greater than 0"},
		{"missing role", `[{"version":"default","master":{"cpu_cores":4,"ram_mib":1,"disk_size_gb":100}}]`, "must be provided"},
		{"not json", `{`, "parse hardware requirements"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRequirements([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseRequirements() error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
