package installer

import (
	"encoding/json"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

// FuzzInstallRequest decodes and checks any install step arg, as the step
// does before it touches a disk. What passes names a device under /dev/, a
// known role, a host id fit for a file name and installer args whose
// values use assisted's character set; what fails is the request's fault
// (ErrInvalidRequest) or the arg's (it does not decode).
func FuzzInstallRequest(f *testing.F) {
	for _, r := range []wire.InstallCmdRequest{
		{BootDevice: "/dev/vda", Role: wire.HostRoleMaster, HostID: "0b5d4f3e-2c1a-4e8b-9f7d-6a5b4c3d2e1f", ClusterID: "c", InfraEnvID: "i",
			InstallerArgs: `["--append-karg","console=ttyS0","-n","--network-dir","/etc/nm"]`},
		{BootDevice: "/dev/disk/by-id/wwn-0x5000c500", Role: wire.HostRoleBootstrap, HostID: "h", ControlPlaneCount: 1,
			InstallerArgs: `["--delete-karg","quiet","--image-url","http://10.0.0.1/x.raw.gz","--save-partlabel","data*"]`},
		{BootDevice: "/dev/", Role: "queen", HostID: "../x", ControlPlaneCount: -1, InstallerArgs: `["--append-karg"]`},
		{BootDevice: "/dev/sda", Role: wire.HostRoleWorker, HostID: "h", InstallerArgs: `{"a":1}`},
	} {
		f.Add(wire.MustEncodeEmbedded(r))
	}
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, arg string) {
		var req wire.InstallCmdRequest
		if err := wire.DecodeStepArg(wire.StepTypeInstall, []string{arg}, &req); err != nil {
			if !strings.HasPrefix(err.Error(), "install args: ") {
				t.Fatalf("DecodeStepArg(%q): %v does not name the step", arg, err)
			}
			return
		}
		args, err := validateRequest(req)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("validateRequest(%q): %v is not ErrInvalidRequest", arg, err)
			}
			return
		}
		if !strings.HasPrefix(req.BootDevice, "/dev/") || len(req.BootDevice) == len("/dev/") || !validHostID(req.HostID) || strings.Contains(req.HostID, "/") {
			t.Fatalf("validateRequest(%q) accepted device %q, host id %q", arg, req.BootDevice, req.HostID)
		}
		if !slices.Contains([]wire.HostRole{wire.HostRoleMaster, wire.HostRoleWorker, wire.HostRoleBootstrap, wire.HostRoleArbiter}, req.Role) {
			t.Fatalf("validateRequest(%q) accepted role %q", arg, req.Role)
		}
		for _, v := range slices.Concat(args.appendKargs, args.deleteKargs) {
			if !validArgValue(v) {
				t.Fatalf("validateRequest(%q) accepted karg %q", arg, v)
			}
		}
		if args.networkDir != defaultNetworkDir && !validArgValue(args.networkDir) {
			t.Fatalf("validateRequest(%q) accepted network dir %q", arg, args.networkDir)
		}
	})
}

// FuzzApplyInstallerArgs folds installer args (and, with --copy-network, a
// keyfile) into any ignition config, as the built-in writer does. With
// nothing to apply the config comes back byte for byte; otherwise the
// result is a JSON object with a 3.x version, every karg in place, the
// keyfile once, and applying again changes nothing.
func FuzzApplyInstallerArgs(f *testing.F) {
	f.Add([]byte(`{"ignition":{"version":"3.2.0"}}`), `["--append-karg","console=ttyS0","--delete-karg","quiet","-n"]`)
	f.Add([]byte(`{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":["a"]},"storage":{"files":[{"path":"/etc/NetworkManager/system-connections/eth0.nmconnection"}]}}`), `["-n","--append-karg","a"]`)
	f.Add([]byte(`{"ignition":{"version":"2.2.0"}}`), `["--append-karg","x"]`)
	f.Add([]byte(`{"ignition":{"version":"3.1.0"},"kernelArguments":[]}`), `["--delete-karg","x"]`)
	f.Add([]byte(`null`), `["-n"]`)
	f.Add([]byte(`{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/etc/NetworkManager/system-connections/./eth0.nmconnection"},{"path":7}]}}`), `["-n"]`)
	f.Add([]byte(`{"ignition":{"version":"3.0.0"},"storage":{"files":"x"}}`), ``)
	kfs := []keyfile{{name: "eth0.nmconnection", data: []byte("[connection]\nid=eth0\n")}}
	f.Fuzz(func(t *testing.T, ign []byte, installerArgs string) {
		a, problems := parseInstallerArgs(installerArgs)
		if len(problems) > 0 {
			return
		}
		var files []keyfile
		if a.copyNetwork {
			files = kfs
		}
		out, err := applyInstallerArgs(ign, a, files)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "apply installer args to ignition: ") {
				t.Fatalf("applyInstallerArgs: error %q does not say what failed", err)
			}
			return
		}
		if len(a.appendKargs) == 0 && len(a.deleteKargs) == 0 && len(files) == 0 {
			if string(out) != string(ign) {
				t.Fatalf("nothing to apply, yet the config changed:\n%s\n%s", ign, out)
			}
			return
		}
		// The config is read leniently: what the service sent may hold
		// anything where these checks do not look.
		var cfg map[string]any
		if err := json.Unmarshal(out, &cfg); err != nil || cfg == nil {
			t.Fatalf("applyInstallerArgs made %s: %v", out, err)
		}
		field := func(path ...string) any {
			var v any = cfg
			for _, k := range path {
				m, _ := v.(map[string]any)
				v = m[k]
			}
			return v
		}
		version, _ := field("ignition", "version").(string)
		minor, ok := specMinor(version)
		if !ok || (len(a.appendKargs)+len(a.deleteKargs) > 0 && minor < 3) {
			t.Fatalf("applyInstallerArgs left version %q with kernel arguments", version)
		}
		for key, want := range map[string][]string{"shouldExist": a.appendKargs, "shouldNotExist": a.deleteKargs} {
			list, _ := field("kernelArguments", key).([]any)
			for _, k := range want {
				if !slices.Contains(list, any(k)) {
					t.Fatalf("karg %q not in %s %v", k, key, list)
				}
			}
		}
		if len(files) > 0 {
			n := 0
			list, _ := field("storage", "files").([]any)
			for _, fl := range list {
				m, _ := fl.(map[string]any)
				if p, ok := m["path"].(string); ok && path.Clean(p) == defaultNetworkDir+"/eth0.nmconnection" {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("the keyfile is in storage.files %d times: %s", n, out)
			}
		}
		again, err := applyInstallerArgs(out, a, files)
		if err != nil {
			t.Fatalf("applying again: %v", err)
		}
		var x, y any
		if json.Unmarshal(out, &x) != nil || json.Unmarshal(again, &y) != nil {
			t.Fatalf("applying again made %s", again)
		}
		if diff := cmp.Diff(x, y); diff != "" {
			t.Fatalf("applying again changed the config:\n%s", diff)
		}
	})
}
