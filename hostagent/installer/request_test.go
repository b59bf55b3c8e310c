package installer

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func TestValidateRequestRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(*wire.InstallCmdRequest)
		// mention is what the message must name so that a person can
		// find the bad field; every case is also an ErrInvalidRequest.
		mention []string
	}{
		{"device outside /dev", func(r *wire.InstallCmdRequest) { r.BootDevice = "/tmp/disk.img" }, []string{"boot_device"}},
		{"bare /dev/", func(r *wire.InstallCmdRequest) { r.BootDevice = "/dev/" }, []string{"boot_device"}},
		{"empty device", func(r *wire.InstallCmdRequest) { r.BootDevice = "" }, []string{"boot_device"}},
		{"auto-assign role", func(r *wire.InstallCmdRequest) { r.Role = wire.HostRoleAutoAssign }, []string{"role"}},
		{"no host id", func(r *wire.InstallCmdRequest) { r.HostID = "" }, []string{"host_id"}},
		{"host id with a path", func(r *wire.InstallCmdRequest) { r.HostID = "../../etc/x" }, []string{"host_id"}},
		{"bootstrap without count", func(r *wire.InstallCmdRequest) {
			r.Role, r.ControlPlaneCount = wire.HostRoleBootstrap, 0
		}, []string{"control_plane_count"}},
		{"negative count", func(r *wire.InstallCmdRequest) { r.ControlPlaneCount = -1 }, []string{"control_plane_count"}},
		{"disk to format outside /dev", func(r *wire.InstallCmdRequest) {
			r.DisksToFormat = []string{"/dev/sdb", "sdc"}
		}, []string{`disks_to_format[1] "sdc"`}},
		{"args not json", func(r *wire.InstallCmdRequest) { r.InstallerArgs = `--append-karg x` }, []string{"installer_args"}},
		{"args not strings", func(r *wire.InstallCmdRequest) { r.InstallerArgs = `[1, 2]` }, []string{"installer_args"}},
		{"args an object", func(r *wire.InstallCmdRequest) { r.InstallerArgs = `{"a":"b"}` }, []string{"installer_args"}},
		{"unknown flag", func(r *wire.InstallCmdRequest) { r.InstallerArgs = `["--firstboot-args","x"]` }, []string{"--firstboot-args", "--append-karg"}},
		{"flag with =", func(r *wire.InstallCmdRequest) { r.InstallerArgs = `["--append-karg=x"]` }, []string{"--append-karg=x"}},
		{"flag without value", func(r *wire.InstallCmdRequest) { r.InstallerArgs = `["--append-karg"]` }, []string{"--append-karg needs a value"}},
		{"flag then flag", func(r *wire.InstallCmdRequest) { r.InstallerArgs = `["--delete-karg","-n"]` }, []string{"--delete-karg needs a value"}},
		{"value with a space", func(r *wire.InstallCmdRequest) { r.InstallerArgs = `["--append-karg","a b"]` }, []string{`"a b"`}},
		{"value with a shell char", func(r *wire.InstallCmdRequest) { r.InstallerArgs = `["--append-karg","a|b"]` }, []string{`"a|b"`}},
		{"stray value", func(r *wire.InstallCmdRequest) { r.InstallerArgs = `["quiet"]` }, []string{`"quiet"`}},
		{"every problem at once", func(r *wire.InstallCmdRequest) {
			r.BootDevice, r.Role, r.InstallerArgs = "sda", "", `["--bogus"]`
		}, []string{"boot_device", "role", "--bogus"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := testRequest(wire.HostRoleMaster, 3)
			tt.edit(&req)
			_, err := validateRequest(req)
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("validateRequest = %v, want ErrInvalidRequest", err)
			}
			for _, m := range tt.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("validateRequest = %q, want it to name %s", err, m)
				}
			}
		})
	}
}

func TestParseInstallerArgs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want installerArgs
	}{
		{"none", "", installerArgs{networkDir: defaultNetworkDir}},
		{"empty list", "[]", installerArgs{raw: []string{}, networkDir: defaultNetworkDir}},
		{
			name: "what the service builds",
			in:   `["--append-karg","rw","--append-karg","rd.multipath=default","--append-karg","ip=52-54-00-aa-bb-cc:dhcp,dhcp6","--copy-network"]`,
			want: installerArgs{
				raw:         []string{"--append-karg", "rw", "--append-karg", "rd.multipath=default", "--append-karg", "ip=52-54-00-aa-bb-cc:dhcp,dhcp6", "--copy-network"},
				appendKargs: []string{"rw", "rd.multipath=default", "ip=52-54-00-aa-bb-cc:dhcp,dhcp6"},
				copyNetwork: true,
				networkDir:  defaultNetworkDir,
			},
		},
		{
			name: "every flag",
			in:   `["-n","--network-dir","/etc/nz/keyfiles","--delete-karg","console=ttyS0,115200n8","--save-partindex","5-","--image-file","/run/media/iso/rhcos.raw","--image-url","http://10.0.0.1/i.raw.gz"]`,
			want: installerArgs{
				raw:         []string{"-n", "--network-dir", "/etc/nz/keyfiles", "--delete-karg", "console=ttyS0,115200n8", "--save-partindex", "5-", "--image-file", "/run/media/iso/rhcos.raw", "--image-url", "http://10.0.0.1/i.raw.gz"},
				deleteKargs: []string{"console=ttyS0,115200n8"},
				copyNetwork: true,
				networkDir:  "/etc/nz/keyfiles",
				builtinCant: []string{"--save-partindex", "--image-file", "--image-url"},
			},
		},
		{
			name: "assisted's odd characters",
			in:   `["--append-karg","a<=b@!#$%*()_+,-./:;{}[]'\""]`,
			want: installerArgs{
				raw:         []string{"--append-karg", `a<=b@!#$%*()_+,-./:;{}[]'"`},
				appendKargs: []string{`a<=b@!#$%*()_+,-./:;{}[]'"`},
				networkDir:  defaultNetworkDir,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := parseInstallerArgs(tt.in)
			if len(problems) > 0 {
				t.Fatalf("parseInstallerArgs(%s) problems: %v", tt.in, problems)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(installerArgs{})); diff != "" {
				t.Errorf("parseInstallerArgs(%s) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestValidateRequestAccepts(t *testing.T) {
	// Every field filled, as node zero and assisted-service fill them.
	filled := testRequest(wire.HostRoleBootstrap, 3)
	yes, noProxy := true, "127.0.0.1,localhost,.svc,.cluster.local,api-int.ostest.example.com"
	filled.InstallerImage, filled.ControllerImage = "quay.io/ocp/installer:4.18.0", "quay.io/ocp/controller:4.18.0"
	filled.McoImage, filled.MustGatherImage = "quay.io/ocp/mco:4.18.0", `{"ocp":"quay.io/ocp/must-gather:4.18.0"}`
	filled.OpenshiftVersion, filled.CheckCvo, filled.EnableSkipMcoReboot, filled.NotifyNumReboots = "4.18.0", &yes, true, true
	filled.DisksToFormat = []string{"/dev/disk/by-id/wwn-0x5000c500a0000001", "/dev/sdc"}
	filled.Proxy = &wire.Proxy{HTTPProxy: ptrTo("http://proxy.example.com:3128"), NoProxy: &noProxy}
	filled.InstallerArgs = `["--append-karg","ip=52-54-00-aa-bb-cc:dhcp"]`
	filled.HighAvailabilityMode = wire.InstallCmdRequestHighAvailabilityModeFull
	for _, req := range []wire.InstallCmdRequest{
		testRequest(wire.HostRoleMaster, 3),
		testRequest(wire.HostRoleArbiter, 2),
		testRequest(wire.HostRoleWorker, 0),
		testRequest(wire.HostRoleBootstrap, 1),
		testRequest(wire.HostRoleBootstrap, 5),
		filled,
	} {
		if _, err := validateRequest(req); err != nil {
			t.Errorf("validateRequest(%s, %d) = %v", req.Role, req.ControlPlaneCount, err)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
