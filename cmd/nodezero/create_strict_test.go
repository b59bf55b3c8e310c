package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateConfigImageStrictInputs is issue #16 item 7 through the
// command: in the static input set (every host static, DHCP off), an
// unknown agent-config key, a static IP outside the machine network, one on
// two hosts, a VIP that is a host's address and a rendezvous IP no host has
// each give their file:line:col line, all in one run; create config-image
// exits non-zero and writes no image. An unknown install-config key is a
// warning there, as in openshift-install: the image is made.
func TestCreateConfigImageStrictInputs(t *testing.T) {
	static := filepath.Join("..", "..", "configimage", "inputs", "testdata", "static")
	replace := func(t *testing.T, path, old, new string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), old); n < 1 {
			t.Fatalf("%s has no %q", path, old)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("errors", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "install")
		copyDir(t, static, dir)
		ac, ic := filepath.Join(dir, "agent-config.yaml"), filepath.Join(dir, "install-config.yaml")
		replace(t, ac, "  rootDeviceHints:\n", "  rootDeviceHint:\n")      // master-0
		replace(t, ac, "- ip: 192.168.111.81\n", "- ip: 192.168.111.80\n") // master-1 takes master-0's
		replace(t, ac, "- ip: 192.168.111.82\n", "- ip: 192.168.112.82\n") // master-2 leaves the machine network
		replace(t, ac, "rendezvousIP: 192.168.111.80", "rendezvousIP: 192.168.111.85")
		replace(t, ic, "    - 192.168.111.5\n", "    - 192.168.111.90\n") // worker-0's address
		out, err := exec.Command(nodezeroBinary(t), "create", "config-image", "--dir", dir).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("create config-image: %v, want a non-zero exit\n%s", err, out)
		}
		for _, want := range []string{
			`agent-config.yaml:5:15: rendezvousIP: Invalid value: "192.168.111.85": no host can become node zero: no host's networkConfig assigns this address, and every host has a static networkConfig with DHCP off for all its interfaces`,
			`agent-config.yaml:9:3: hosts[0].rootDeviceHint: unknown field "rootDeviceHint"; did you mean "rootDeviceHints"?`,
			`agent-config.yaml:55:15: hosts[1].networkConfig.interfaces[0].ipv4.address[0].ip: Duplicate value: "192.168.111.80": hosts master-0 and master-1 both have this static address (master-0's at agent-config.yaml:24:15); each host needs its own`,
			`agent-config.yaml:86:15: hosts[2].networkConfig.interfaces[0].ipv4.address[0].ip: Invalid value: "192.168.112.82": IP expected to be in one of the machine networks: 192.168.111.0/24; host master-2 has no address in them, static or from DHCP, so it cannot join the cluster`,
			`install-config.yaml:23:7: platform.baremetal.apiVIPs[0]: Invalid value: "192.168.111.90": VIP for API must not be a host's address; host worker-0 has it at agent-config.yaml:117:15`,
		} {
			if !strings.Contains(string(out), want+"\n") {
				t.Errorf("output lacks the line\n%s\ngot:\n%s", want, out)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "agentconfig.noarch.iso")); !os.IsNotExist(err) {
			t.Errorf("image written despite the errors: stat: %v", err)
		}
	})

	t.Run("install-config unknown key warns", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "install")
		copyDir(t, static, dir)
		replace(t, filepath.Join(dir, "install-config.yaml"), "  replicas: 3\n", "  replicas: 3\n  replica: 3\n")
		out := runBinary(t, "create", "config-image", "--dir", dir)
		const want = `install-config.yaml:11:3: warning: controlPlane.replica: unknown field, ignored; did you mean "replicas"?`
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "agentconfig.noarch.iso")); err != nil {
			t.Errorf("no image after warnings only: %v", err)
		}
	})
}
