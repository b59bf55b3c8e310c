package assisted

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

// installStepOf builds the install step's request for one host of one
// cluster, as the service hands it out.
func installStepOf(t *testing.T, cfg Config, c wire.Cluster, h wire.Host, inv *wire.Inventory) (wire.InstallCmdRequest, map[string]json.RawMessage) {
	t.Helper()
	id := c.ID
	h.ClusterID = &id
	hr := &hostRec{h: h, inv: inv}
	s := &Service{cfg: cfg, clusters: map[string]*clusterRec{c.ID: {c: c}}, infraEnvs: map[string]*infraEnvRec{}}
	args, ok := s.installArgs(hr)
	if !ok || len(args) != 1 {
		t.Fatalf("installArgs = %v, %v; want one arg", args, ok)
	}
	var req wire.InstallCmdRequest
	if err := json.Unmarshal([]byte(args[0]), &req); err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args[0]), &raw); err != nil {
		t.Fatal(err)
	}
	return req, raw
}

// TestInstallArgs: the install step is filled as assisted-service's
// install_cmd.go fills it: the release's images from the service's config
// (assisted's defaults for the installer and controller), check_cvo always
// sent, the MCO reboot skipped from 4.15 on except on s390x and
// device-mapper disks, reboots counted, the high availability mode of the
// older swaggers, the bootable disks to quick-format (never null), the
// proxy with assisted's no_proxy additions.
func TestInstallArgs(t *testing.T) {
	const clusterID = "8c2f3a1e-0d6b-4c43-9b7e-3f0c1a2e6b1d"
	images := InstallImages{Installer: "quay.io/ocp/installer:4.18.0", Controller: "quay.io/ocp/controller:4.18.0",
		MCO: "quay.io/ocp/mco:4.18.0", MustGather: "quay.io/ocp/must-gather:4.18.0"}
	cluster := func() wire.Cluster {
		return wire.Cluster{ID: clusterID, Name: "ostest", BaseDNSDomain: "example.com", OpenshiftVersion: "4.18.0",
			ControlPlaneCount: 3, CPUArchitecture: "x86_64"}
	}
	host := func(role wire.HostRole) wire.Host {
		return wire.Host{ID: "0f3b2f5e-8d8e-4f39-9a0e-6f2c3a1d5b7e", InfraEnvID: "5d2a7c1e-3b4f-4e6a-8c9d-0e1f2a3b4c5d",
			Role: role, InstallationDiskID: "/dev/disk/by-id/wwn-0x1", InstallationDiskPath: "/dev/sda"}
	}
	disk := func(id, name string, bootable bool) *wire.Disk {
		return &wire.Disk{ID: id, Name: name, Path: "/dev/" + name, DriveType: wire.DriveTypeSSD, SizeBytes: 200 << 30, Bootable: bootable}
	}
	inv := func(disks ...*wire.Disk) *wire.Inventory {
		return &wire.Inventory{Disks: append([]*wire.Disk{disk("/dev/disk/by-id/wwn-0x1", "sda", false)}, disks...)}
	}
	tests := []struct {
		name    string
		cfg     Config
		cluster func(*wire.Cluster)
		host    wire.Host
		inv     *wire.Inventory
		want    func(*wire.InstallCmdRequest) // from the common expectation
		raw     map[string]string             // keys as written, "" for absent
	}{
		{
			name: "bootstrap of three masters", cfg: Config{Images: images},
			host: func() wire.Host { h := host(wire.HostRoleMaster); h.Bootstrap = true; return h }(),
			inv:  inv(),
			want: func(r *wire.InstallCmdRequest) { r.Role = wire.HostRoleBootstrap },
			raw:  map[string]string{"check_cvo": "false", "disks_to_format": "[]", "high_availability_mode": `"Full"`, "service_ips": ""},
		},
		{
			name: "worker: no control plane count", cfg: Config{Images: images, CheckClusterVersion: true},
			host: host(wire.HostRoleWorker), inv: inv(),
			want: func(r *wire.InstallCmdRequest) {
				r.Role, r.ControlPlaneCount, r.CheckCvo = wire.HostRoleWorker, 0, ptr(true)
			},
			raw: map[string]string{"check_cvo": "true", "control_plane_count": ""},
		},
		{
			name: "assisted's default images, no mco or must-gather", cfg: Config{},
			host: host(wire.HostRoleMaster), inv: inv(),
			want: func(r *wire.InstallCmdRequest) {
				r.InstallerImage, r.ControllerImage = defaultInstallerImage, defaultControllerImage
				r.McoImage, r.MustGatherImage = "", ""
			},
			raw: map[string]string{"mco_image": "", "must_gather_image": ""},
		},
		{
			name: "single node", cfg: Config{Images: images}, cluster: func(c *wire.Cluster) { c.ControlPlaneCount = 1 },
			host: func() wire.Host { h := host(wire.HostRoleMaster); h.Bootstrap = true; return h }(), inv: inv(),
			want: func(r *wire.InstallCmdRequest) {
				r.Role, r.ControlPlaneCount, r.HighAvailabilityMode = wire.HostRoleBootstrap, 1, wire.InstallCmdRequestHighAvailabilityModeNone
			},
		},
		{
			name: "4.14 reboots for the MCO", cfg: Config{Images: images}, cluster: func(c *wire.Cluster) { c.OpenshiftVersion = "4.14.3" },
			host: host(wire.HostRoleMaster), inv: inv(),
			want: func(r *wire.InstallCmdRequest) { r.OpenshiftVersion, r.EnableSkipMcoReboot = "4.14.3", false },
		},
		{
			name: "s390x reboots for the MCO", cfg: Config{Images: images}, cluster: func(c *wire.Cluster) { c.CPUArchitecture = "s390x" },
			host: host(wire.HostRoleMaster), inv: inv(),
			want: func(r *wire.InstallCmdRequest) { r.EnableSkipMcoReboot = false },
		},
		{
			name: "a device-mapper disk reboots for the MCO", cfg: Config{Images: images},
			host: func() wire.Host {
				h := host(wire.HostRoleMaster)
				h.InstallationDiskID, h.InstallationDiskPath = "/dev/dm-0", "/dev/dm-0"
				return h
			}(),
			inv:  &wire.Inventory{Disks: []*wire.Disk{{ID: "/dev/dm-0", Name: "dm-0", Path: "/dev/dm-0", DriveType: wire.DriveTypeMultipath}}},
			want: func(r *wire.InstallCmdRequest) { r.BootDevice, r.EnableSkipMcoReboot = "/dev/dm-0", false },
		},
		{
			name: "disks to format", cfg: Config{Images: images},
			host: func() wire.Host {
				h := host(wire.HostRoleMaster)
				h.SkipFormattingDisks = "/dev/disk/by-id/wwn-0x4"
				return h
			}(),
			inv: inv(
				disk("/dev/disk/by-id/wwn-0x2", "sdb", true),
				disk("", "sdc", true),
				func() *wire.Disk { d := disk("/dev/disk/by-id/usb", "sdd", true); d.Removable = true; return d }(),
				disk("/dev/disk/by-id/wwn-0x4", "sde", true),
				func() *wire.Disk {
					d := disk("/dev/disk/by-id/iscsi", "sdf", true)
					d.DriveType = wire.DriveTypeISCSI
					return d
				}(),
				func() *wire.Disk {
					d := disk("/dev/disk/by-id/media", "sr0", true)
					d.IsInstallationMedia = true
					return d
				}(),
				func() *wire.Disk {
					d := disk("/dev/disk/by-id/mmc", "mmcblk0", true)
					d.ByPath = "/dev/disk/by-path/platform-mmcblk0"
					return d
				}(),
				disk("/dev/disk/by-id/wwn-0x5", "sdg", false),
			),
			want: func(r *wire.InstallCmdRequest) { r.DisksToFormat = []string{"/dev/disk/by-id/wwn-0x2", "/dev/sdc"} },
		},
		{
			name: "kept partitions: the installation disk is not formatted", cfg: Config{Images: images},
			host: func() wire.Host {
				h := host(wire.HostRoleMaster)
				h.InstallerArgs = `["--save-partindex","5"]`
				return h
			}(),
			inv: &wire.Inventory{Disks: []*wire.Disk{disk("/dev/disk/by-id/wwn-0x1", "sda", true)}},
			want: func(r *wire.InstallCmdRequest) {
				r.InstallerArgs, r.SkipInstallationDiskCleanup, r.DisksToFormat = `["--save-partindex","5"]`, true, []string{}
			},
		},
		{
			name: "proxy", cfg: Config{Images: images},
			cluster: func(c *wire.Cluster) {
				c.HTTPProxy, c.NoProxy = "http://proxy.example.com:3128", "example.org,localhost"
			},
			host: host(wire.HostRoleMaster), inv: inv(),
			want: func(r *wire.InstallCmdRequest) {
				r.Proxy = &wire.Proxy{HTTPProxy: ptr("http://proxy.example.com:3128"),
					NoProxy: ptr("example.org,localhost,127.0.0.1,.svc,.cluster.local,api-int.ostest.example.com")}
			},
			raw: map[string]string{"proxy": `{"http_proxy":"http://proxy.example.com:3128","no_proxy":"example.org,localhost,127.0.0.1,.svc,.cluster.local,api-int.ostest.example.com"}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster()
			if tc.cluster != nil {
				tc.cluster(&c)
			}
			got, raw := installStepOf(t, tc.cfg, c, tc.host, tc.inv)
			want := wire.InstallCmdRequest{
				ClusterID: clusterID, InfraEnvID: tc.host.InfraEnvID, HostID: tc.host.ID, Role: wire.HostRoleMaster,
				BootDevice: "/dev/sda", ControlPlaneCount: 3,
				InstallerImage: images.Installer, ControllerImage: images.Controller, McoImage: images.MCO, MustGatherImage: images.MustGather,
				OpenshiftVersion: "4.18.0", CheckCvo: ptr(false), DisksToFormat: []string{},
				EnableSkipMcoReboot: true, NotifyNumReboots: true,
				HighAvailabilityMode: wire.InstallCmdRequestHighAvailabilityModeFull,
			}
			tc.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("install request (-want +got):\n%s", diff)
			}
			for k, w := range tc.raw {
				if string(raw[k]) != w {
					t.Errorf("%s written as %s, want %s", k, raw[k], w)
				}
			}
		})
	}
}
