package inputs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/configimage/report"
)

// baseIC and baseAC are a valid 3 control plane + 2 compute baremetal
// install; table cases edit them. Line numbers matter to the expectations.
const baseIC = `apiVersion: v1
baseDomain: example.com
metadata:
  name: ocp
compute:
- name: worker
  replicas: 2
controlPlane:
  name: master
  replicas: 3
networking:
  networkType: OVNKubernetes
  clusterNetwork:
  - cidr: 10.128.0.0/14
    hostPrefix: 23
  machineNetwork:
  - cidr: 192.168.111.0/24
  serviceNetwork:
  - 172.30.0.0/16
platform:
  baremetal:
    apiVIPs:
    - 192.168.111.5
    ingressVIPs:
    - 192.168.111.4
pullSecret: '{"auths":{"quay.io":{"auth":"ZmFrZTpmYWtl"}}}'
sshKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL2DjTikTFUrp3OYn0YPxjrZODSNNrQ1NDD+ldxYmO4h core@nodezero.test
`

const baseAC = `apiVersion: v1beta1
kind: AgentConfig
metadata:
  name: ocp
rendezvousIP: 192.168.111.80
hosts:
- hostname: master-0
  role: master
  interfaces:
  - name: enp1s0
    macAddress: 52:54:00:00:00:01
  networkConfig:
    interfaces:
    - name: enp1s0
      type: ethernet
      state: up
      mac-address: 52:54:00:00:00:01
      ipv4:
        enabled: true
        address:
        - ip: 192.168.111.80
          prefix-length: 24
- hostname: master-1
  role: master
  interfaces:
  - name: enp1s0
    macAddress: 52:54:00:00:00:02
- hostname: master-2
  role: master
  interfaces:
  - name: enp1s0
    macAddress: 52:54:00:00:00:03
- hostname: worker-0
  role: worker
  interfaces:
  - name: enp1s0
    macAddress: 52:54:00:00:00:04
  rootDeviceHints:
    deviceName: /dev/sda
- hostname: worker-1
  role: worker
  interfaces:
  - name: enp1s0
    macAddress: 52:54:00:00:00:05
`

// withNet gives baseAC's host n (1-5, by MAC 52:54:00:00:00:0n) a static
// networkConfig with the one IPv4 address ip/24, DHCP off.
func withNet(n int, ip string) edit {
	mac := fmt.Sprintf("52:54:00:00:00:%02d", n)
	return sub("    macAddress: "+mac+"\n", "    macAddress: "+mac+"\n"+
		"  networkConfig:\n    interfaces:\n    - name: enp1s0\n      type: ethernet\n      state: up\n      mac-address: "+mac+"\n"+
		"      ipv4:\n        enabled: true\n        address:\n        - ip: "+ip+"\n          prefix-length: 24\n")
}

// allStatic gives every baseAC host but master-0 (static already) a static
// networkConfig in the machine network: no host takes an address from DHCP.
func allStatic() []edit {
	return []edit{withNet(2, "192.168.111.81"), withNet(3, "192.168.111.82"), withNet(4, "192.168.111.83"), withNet(5, "192.168.111.84")}
}

// edit replaces old (which must occur exactly once) with new; an empty old
// appends new to the end of the file.
type edit struct{ old, new string }

func sub(old, new string) edit { return edit{old, new} }
func add(text string) edit     { return edit{"", text} }

func apply(t *testing.T, base string, edits []edit) string {
	t.Helper()
	s := base
	for _, e := range edits {
		if e.old == "" {
			s += e.new
			continue
		}
		if n := strings.Count(s, e.old); n != 1 {
			t.Fatalf("edit %q matches %d times, want 1", e.old, n)
		}
		s = strings.Replace(s, e.old, e.new, 1)
	}
	return s
}

// loadAndValidate runs what `create config-image` runs and returns the
// report lines.
func loadAndValidate(t *testing.T, icText, acText string, withAC bool) []string {
	t.Helper()
	ic, rep := LoadInstallConfig("install-config.yaml", []byte(icText))
	var ac *AgentConfig
	if withAC {
		var r report.Report
		ac, r = LoadAgentConfig("agent-config.yaml", []byte(acText))
		rep.Merge(r)
	}
	rep.Merge(Validate(ic, ac))
	return rep.Lines()
}

// testdataSets lists testdata/<set>/ directories.
func testdataSets(t testing.TB) []string {
	t.Helper()
	all, err := filepath.Glob("testdata/*")
	var dirs []string
	for _, d := range all {
		if d != filepath.Join("testdata", "fuzz") { // the fuzz corpora, not a set
			dirs = append(dirs, d)
		}
	}
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no testdata sets: %v", err)
	}
	return dirs
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
