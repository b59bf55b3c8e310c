package assisted

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// installStepOf builds the install step's request for one host of one
// cluster, as the service hands it out.
func installStepOf(t *testing.T, cfg Config, c v2.Cluster, h v2.Host, inv *v2.Inventory) (v2.InstallCmdRequest, map[string]json.RawMessage) {
	t.Helper()
	id := c.ID
	h.ClusterID = &id
	hr := &hostRec{h: h, inv: inv}
	s := &Service{cfg: cfg, clusters: map[string]*clusterRec{c.ID: {c: c}}, infraEnvs: map[string]*infraEnvRec{}}
	args, ok := s.installArgs(hr)
	if !ok || len(args) != 1 {
		t.Fatalf("installArgs = %v, %v; want one arg", args, ok)
	}
	var req v2.InstallCmdRequest
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
	cluster := func() v2.Cluster {
		return v2.Cluster{ID: clusterID, Name: "ostest", BaseDNSDomain: "example.com", OpenshiftVersion: "4.18.0",
			ControlPlaneCount: 3, CPUArchitecture: "x86_64"}
	}
	host := func(role v2.HostRole) v2.Host {
		return v2.Host{ID: "0f3b2f5e-8d8e-4f39-9a0e-6f2c3a1d5b7e", InfraEnvID: "5d2a7c1e-3b4f-4e6a-8c9d-0e1f2a3b4c5d",
			Role: role, InstallationDiskID: "/dev/disk/by-id/wwn-0x1", InstallationDiskPath: "/dev/sda"}
	}
	disk := func(id, name string, bootable bool) *v2.Disk {
		return &v2.Disk{ID: id, Name: name, Path: "/dev/" + name, DriveType: v2.DriveTypeSSD, SizeBytes: 200 << 30, Bootable: bootable}
	}
	inv := func(disks ...*v2.Disk) *v2.Inventory {
		return &v2.Inventory{Disks: append([]*v2.Disk{disk("/dev/disk/by-id/wwn-0x1", "sda", false)}, disks...)}
	}
	tests := []struct {
		name    string
		cfg     Config
		cluster func(*v2.Cluster)
		host    v2.Host
		inv     *v2.Inventory
		want    func(*v2.InstallCmdRequest) // from the common expectation
		raw     map[string]string           // keys as written, "" for absent
	}{
		{
			name: "bootstrap of three masters", cfg: Config{Images: images},
			host: func() v2.Host { h := host(v2.HostRoleMaster); h.Bootstrap = true; return h }(),
			inv:  inv(),
			want: func(r *v2.InstallCmdRequest) { r.Role = v2.HostRoleBootstrap },
			raw:  map[string]string{"check_cvo": "false", "disks_to_format": "[]", "high_availability_mode": `"Full"`, "service_ips": ""},
		},
		{
			name: "worker: no control plane count", cfg: Config{Images: images, CheckClusterVersion: true},
			host: host(v2.HostRoleWorker), inv: inv(),
			want: func(r *v2.InstallCmdRequest) {
				r.Role, r.ControlPlaneCount, r.CheckCvo = v2.HostRoleWorker, 0, ptr(true)
			},
			raw: map[string]string{"check_cvo": "true", "control_plane_count": ""},
		},
		{
			name: "assisted's default images, no mco or must-gather", cfg: Config{},
			host: host(v2.HostRoleMaster), inv: inv(),
			want: func(r *v2.InstallCmdRequest) {
				r.InstallerImage, r.ControllerImage = defaultInstallerImage, defaultControllerImage
				r.McoImage, r.MustGatherImage = "", ""
			},
			raw: map[string]string{"mco_image": "", "must_gather_image": ""},
		},
		{
			name: "single node", cfg: Config{Images: images}, cluster: func(c *v2.Cluster) { c.ControlPlaneCount = 1 },
			host: func() v2.Host { h := host(v2.HostRoleMaster); h.Bootstrap = true; return h }(), inv: inv(),
			want: func(r *v2.InstallCmdRequest) {
				r.Role, r.ControlPlaneCount, r.HighAvailabilityMode = v2.HostRoleBootstrap, 1, v2.InstallCmdRequestHighAvailabilityModeNone
			},
		},
		{
			name: "4.14 reboots for the MCO", cfg: Config{Images: images}, cluster: func(c *v2.Cluster) { c.OpenshiftVersion = "4.14.3" },
			host: host(v2.HostRoleMaster), inv: inv(),
			want: func(r *v2.InstallCmdRequest) { r.OpenshiftVersion, r.EnableSkipMcoReboot = "4.14.3", false },
		},
		{
			name: "s390x reboots for the MCO", cfg: Config{Images: images}, cluster: func(c *v2.Cluster) { c.CPUArchitecture = "s390x" },
			host: host(v2.HostRoleMaster), inv: inv(),
			want: func(r *v2.InstallCmdRequest) { r.EnableSkipMcoReboot = false },
		},
		{
			name: "a device-mapper disk reboots for the MCO", cfg: Config{Images: images},
			host: func() v2.Host {
				h := host(v2.HostRoleMaster)
				h.InstallationDiskID, h.InstallationDiskPath = "/dev/dm-0", "/dev/dm-0"
				return h
			}(),
			inv:  &v2.Inventory{Disks: []*v2.Disk{{ID: "/dev/dm-0", Name: "dm-0", Path: "/dev/dm-0", DriveType: v2.DriveTypeMultipath}}},
			want: func(r *v2.InstallCmdRequest) { r.BootDevice, r.EnableSkipMcoReboot = "/dev/dm-0", false },
		},
		{
			name: "disks to format", cfg: Config{Images: images},
			host: func() v2.Host {
				h := host(v2.HostRoleMaster)
				h.SkipFormattingDisks = "/dev/disk/by-id/wwn-0x4"
				return h
			}(),
			inv: inv(
				disk("/dev/disk/by-id/wwn-0x2", "sdb", true),
				disk("", "sdc", true),
				func() *v2.Disk { d := disk("/dev/disk/by-id/usb", "sdd", true); d.Removable = true; return d }(),
				disk("/dev/disk/by-id/wwn-0x4", "sde", true),
				func() *v2.Disk {
					d := disk("/dev/disk/by-id/iscsi", "sdf", true)
					d.DriveType = v2.DriveTypeISCSI
					return d
				}(),
				func() *v2.Disk {
					d := disk("/dev/disk/by-id/media", "sr0", true)
					d.IsInstallationMedia = true
					return d
				}(),
				func() *v2.Disk {
					d := disk("/dev/disk/by-id/mmc", "mmcblk0", true)
					d.ByPath = "/dev/disk/by-path/platform-mmcblk0"
					return d
				}(),
				disk("/dev/disk/by-id/wwn-0x5", "sdg", false),
			),
			want: func(r *v2.InstallCmdRequest) { r.DisksToFormat = []string{"/dev/disk/by-id/wwn-0x2", "/dev/sdc"} },
		},
		{
			name: "kept partitions: the installation disk is not formatted", cfg: Config{Images: images},
			host: func() v2.Host {
				h := host(v2.HostRoleMaster)
				h.InstallerArgs = `["--save-partindex","5"]`
				return h
			}(),
			inv: &v2.Inventory{Disks: []*v2.Disk{disk("/dev/disk/by-id/wwn-0x1", "sda", true)}},
			want: func(r *v2.InstallCmdRequest) {
				r.InstallerArgs, r.SkipInstallationDiskCleanup, r.DisksToFormat = `["--save-partindex","5"]`, true, []string{}
			},
		},
		{
			name: "proxy", cfg: Config{Images: images},
			cluster: func(c *v2.Cluster) {
				c.HTTPProxy, c.NoProxy = "http://proxy.example.com:3128", "example.org,localhost"
			},
			host: host(v2.HostRoleMaster), inv: inv(),
			want: func(r *v2.InstallCmdRequest) {
				r.Proxy = &v2.Proxy{HTTPProxy: ptr("http://proxy.example.com:3128"),
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
			want := v2.InstallCmdRequest{
				ClusterID: clusterID, InfraEnvID: tc.host.InfraEnvID, HostID: tc.host.ID, Role: v2.HostRoleMaster,
				BootDevice: "/dev/sda", ControlPlaneCount: 3,
				InstallerImage: images.Installer, ControllerImage: images.Controller, McoImage: images.MCO, MustGatherImage: images.MustGather,
				OpenshiftVersion: "4.18.0", CheckCvo: ptr(false), DisksToFormat: []string{},
				EnableSkipMcoReboot: true, NotifyNumReboots: true,
				HighAvailabilityMode: v2.InstallCmdRequestHighAvailabilityModeFull,
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
