package factoryimage

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/testbed"
)

// The installed OS's first-boot script, run here on the build machine with
// the real ignition against a partition image and a scratch root (its
// NODEZERO_IGNITION_* variables), systemctl recorded instead of run.

// firstBoot runs guest/ignition-firstboot with the partition content part
// (zero-padded to 1 MiB). It returns the console lines, the systemctl calls
// and the root.
func firstBoot(t *testing.T, part []byte) (console string, systemctl []string, root string, err error) {
	t.Helper()
	ign, ferr := FindIgnition()
	if ferr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (required when CI=true)", ferr)
		}
		t.Skipf("%v; CI=true makes this a failure", ferr)
	}
	dir := t.TempDir()
	script, rerr := guestFS.ReadFile("guest/ignition-firstboot")
	if rerr != nil {
		t.Fatal(rerr)
	}
	scriptPath := filepath.Join(dir, "ignition-firstboot")
	dev := filepath.Join(dir, "ignition.part")
	calls := filepath.Join(dir, "systemctl.calls")
	fake := filepath.Join(dir, "systemctl")
	root = filepath.Join(dir, "root")
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{scriptPath, script, 0o755},
		{dev, append(part, make([]byte, ignitionSize-len(part))...), 0o644},
		{fake, []byte("#!/bin/sh\necho \"$*\" >>" + calls + "\n"), 0o755},
	} {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", scriptPath)
	cmd.Env = append(os.Environ(),
		"NODEZERO_IGNITION_DEVICE="+dev,
		"NODEZERO_IGNITION_ROOT="+root,
		"NODEZERO_IGNITION_RUN="+filepath.Join(dir, "run"),
		"NODEZERO_IGNITION_BIN="+ign,
		"NODEZERO_IGNITION_SYSTEMCTL="+fake,
		"NODEZERO_IGNITION_WAIT=0",
	)
	out, err := cmd.CombinedOutput()
	b, _ := os.ReadFile(calls)
	if s := strings.TrimSpace(string(b)); s != "" {
		systemctl = strings.Split(s, "\n")
	}
	return string(out), systemctl, root, err
}

// roleConfig is what node zero's built-in generator gives a host, in
// small: files (the hostname among them), a unit enabled, one disabled.
const roleConfig = `{"ignition":{"version":"3.4.0"},
"storage":{"files":[
 {"path":"/etc/hostname","mode":420,"overwrite":true,"contents":{"source":"data:,master-0%0A"}},
 {"path":"/etc/nodezero/role","mode":420,"contents":{"source":"data:,master%0A"}},
 {"path":"/var/lib/kubelet/config.json","mode":384,"contents":{"source":"data:,%7B%7D"}}],
 "links":[{"path":"/etc/nodezero/current","target":"/etc/nodezero/role"}]},
"systemd":{"units":[
 {"name":"nodezero-node.service","enabled":true,"contents":"[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"},
 {"name":"unwanted.service","enabled":false,"contents":"[Service]\nExecStart=/bin/true\n"}]}}`

// TestFirstBootApplies: Ignition writes the config's files and units into
// the root, the console says each and the total, the enabled unit is
// enabled and started after a daemon-reload, and the marker keeps the
// unit from running again.
func TestFirstBootApplies(t *testing.T) {
	console, calls, root, err := firstBoot(t, []byte(roleConfig))
	if err != nil {
		t.Fatalf("ignition-firstboot: %v\n%s", err, console)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(console), "\n") {
		if strings.HasPrefix(l, "NODEZERO-IGNITION config: ") {
			continue // its byte count
		}
		lines = append(lines, l)
	}
	want := []string{
		"NODEZERO-IGNITION file /etc/hostname",
		"NODEZERO-IGNITION file /etc/nodezero/role",
		"NODEZERO-IGNITION link /etc/nodezero/current -> /etc/nodezero/role",
		"NODEZERO-IGNITION file /var/lib/kubelet/config.json",
		"NODEZERO-IGNITION unit nodezero-node.service",
		"NODEZERO-IGNITION unit unwanted.service",
		"NODEZERO-IGNITION hostname master-0",
		"NODEZERO-IGNITION enabled and started nodezero-node.service",
		"NODEZERO-IGNITION applied files=4 units=2",
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("console (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"daemon-reload", "enable nodezero-node.service", "--no-block start nodezero-node.service"}, calls); d != "" {
		t.Errorf("systemctl calls (-want +got):\n%s", d)
	}
	for path, want := range map[string]string{
		"etc/hostname":      "master-0\n",
		"etc/nodezero/role": "master\n",
		"etc/systemd/system/nodezero-node.service":     "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
		"etc/systemd/system-preset/20-ignition.preset": "",
	} {
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Errorf("Ignition did not write /%s: %v", path, err)
			continue
		}
		if want != "" && string(b) != want {
			t.Errorf("/%s = %q, want %q", path, b, want)
		}
	}
	if st, err := os.Stat(filepath.Join(root, "var/lib/kubelet/config.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("/var/lib/kubelet/config.json: %v, mode %v; want 0600", err, st)
	}
	if _, err := os.Stat(filepath.Join(root, "var/lib/nodezero-ignition/applied")); err != nil {
		t.Errorf("no marker after applying: %v (the unit's ConditionPathExists=! reads it)", err)
	}
	unit, _ := guestFS.ReadFile("guest/nodezero-ignition.service")
	if !bytes.Contains(unit, []byte("ConditionPathExists=!/var/lib/nodezero-ignition/applied\n")) {
		t.Error("nodezero-ignition.service does not skip a boot after the marker")
	}
}

// TestFirstBootFails: what the console says when there is nothing to
// apply or Ignition refuses the config; nothing is marked applied.
func TestFirstBootFails(t *testing.T) {
	tests := []struct {
		name, part, want string
	}{
		{"an all-zero partition", "", "NODEZERO-IGNITION failed: the ignition partition (%s) is all zeros: the installer placed no config on this disk"},
		{"a config Ignition refuses", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"etc/x"}]}}`,
			"NODEZERO-IGNITION failed: ignition stage fetch-offline (exit 1): error at $.storage.files.0.path, line 1 col"},
		{"not JSON", "hello", "NODEZERO-IGNITION failed: ignition stage fetch-offline (exit 1): "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			console, calls, root, err := firstBoot(t, []byte(tc.part))
			if err == nil {
				t.Fatalf("ignition-firstboot succeeded:\n%s", console)
			}
			want := strings.Replace(tc.want, "%s", filepath.Join(filepath.Dir(root), "ignition.part"), 1)
			if !strings.Contains(console, want) {
				t.Errorf("console:\n%s\nwant a line starting %q", console, want)
			}
			if len(calls) > 0 {
				t.Errorf("systemctl was called: %v", calls)
			}
			if _, err := os.Stat(filepath.Join(root, "var/lib/nodezero-ignition/applied")); err == nil {
				t.Error("marked applied after a failure")
			}
		})
	}
}

// TestGuestUnitsVerify: systemd itself loads the guest units (their
// program path laid under a scratch root) without complaint.
func TestGuestUnitsVerify(t *testing.T) {
	analyze := testbed.NeedTool(t, "systemd-analyze")
	files, _, err := guestRendered()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var unitPaths []string
	for _, f := range files {
		p := filepath.Join(dir, filepath.Base(f.Path))
		data := f.Data
		if strings.HasSuffix(p, ".service") {
			// ExecStart= must name an existing program for verify.
			data = bytes.ReplaceAll(data, []byte("/usr/local/lib/nodezero/ignition-firstboot"), []byte("/bin/true"))
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if filepath.Ext(p) != "" { // a unit, not the script
			unitPaths = append(unitPaths, p)
		}
	}
	out, err := exec.Command(analyze, append([]string{"verify", "--man=no"}, unitPaths...)...).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify %v: %v\n%s", unitPaths, err, out)
	}
}
