package boot

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/testbed"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/manifests"
)

func staticHost(mac, ip string) *manifests.NMStateConfig {
	doc := `interfaces:
- name: eth0
  type: ethernet
  state: up
  ipv4:
    enabled: true
    address:
    - ip: ` + ip + `
      prefix-length: 24
  ipv6:
    enabled: false
- name: eth0.100
  type: vlan
  state: up
  vlan:
    base-iface: eth0
    id: 100
  ipv4:
    enabled: false
dns-resolver:
  config:
    server: [192.168.111.1]
routes:
  config:
  - destination: 0.0.0.0/0
    next-hop-address: 192.168.111.1
    next-hop-interface: eth0
`
	return &manifests.NMStateConfig{Spec: manifests.NMStateConfigSpec{
		Config: manifests.NetConfig(doc), Interfaces: []manifests.Interface{{MACAddress: mac, Name: "eth0"}},
	}}
}

// layNetwork writes what a config image puts under /etc/assisted/network.
func layNetwork(t *testing.T, root string, configs ...*manifests.NMStateConfig) {
	t.Helper()
	dirs, err := configimage.NetworkDirs(configs)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		for _, f := range d.Files {
			p := filepath.Join(root, configimage.NetworkDir, d.Name, f.Name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestInstallNetwork(t *testing.T) {
	root := t.TempDir()
	layNetwork(t, root, staticHost("52:54:00:aa:bb:01", "192.168.111.20"), staticHost("52:54:00:aa:bb:02", "192.168.111.21"))
	links := []Link{{Name: "lo"}, {Name: "enp1s0f0np0", MAC: "52:54:00:AA:BB:02"}}
	res, err := InstallNetwork(root, links)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(res.Installed, ","), "enp1s0f0np0.100.nmconnection,enp1s0f0np0.nmconnection"; got != want {
		t.Fatalf("installed %s, want %s", got, want)
	}
	dir := filepath.Join(root, SystemConnectionsDir)
	eth, err := os.ReadFile(filepath.Join(dir, "enp1s0f0np0.nmconnection"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"interface-name=enp1s0f0np0\n", "address0=192.168.111.21/24\n", "autoconnect-priority=1\n"} {
		if !bytes.Contains(eth, []byte(want)) {
			t.Errorf("installed keyfile lacks %q:\n%s", want, eth)
		}
	}
	vlan, _ := os.ReadFile(filepath.Join(dir, "enp1s0f0np0.100.nmconnection"))
	if !bytes.Contains(vlan, []byte("parent=enp1s0f0np0\n")) {
		t.Errorf("VLAN keyfile not re-parented:\n%s", vlan)
	}
	fi, _ := os.Stat(filepath.Join(dir, "enp1s0f0np0.nmconnection"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("keyfile mode %v, want 0600", fi.Mode().Perm())
	}
	// NetworkManager is the judge of what we installed.
	nmcli := needTool(t, "nmcli")
	for _, name := range res.Installed {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		id := strings.TrimSuffix(name, ".nmconnection")
		cmd := exec.Command(nmcli, "--offline", "connection", "modify", "connection.id", id)
		cmd.Stdin = bytes.NewReader(b)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("nmcli refuses installed %s: %v\n%s", name, err, out)
		}
	}
	// Again, as after a crash: the same files.
	again, err := InstallNetwork(root, links)
	if err != nil || strings.Join(again.Installed, ",") != strings.Join(res.Installed, ",") {
		t.Errorf("second run: %+v, %v", again, err)
	}
	if !strings.Contains(res.Status(), "installed: enp1s0f0np0.100.nmconnection") {
		t.Errorf("status %q", res.Status())
	}
}

func TestInstallNetworkNoMatchIsDHCP(t *testing.T) {
	root := t.TempDir()
	layNetwork(t, root, staticHost("52:54:00:aa:bb:01", "192.168.111.20"))
	res, err := InstallNetwork(root, []Link{{Name: "eth9", MAC: "52:54:00:00:00:99"}})
	if err != nil || res.HostDir != "" || len(res.Installed) != 0 {
		t.Fatalf("a foreign host: %+v, %v; want nothing installed", res, err)
	}
	if !strings.Contains(res.Status(), "using DHCP") {
		t.Errorf("status %q", res.Status())
	}
	if res, err := InstallNetwork(t.TempDir(), nil); err != nil || res.HostDir != "" {
		t.Errorf("no network dir: %+v, %v", res, err)
	}
}

func TestInstallNetworkTwoDirsForOneHost(t *testing.T) {
	root := t.TempDir()
	layNetwork(t, root, staticHost("52:54:00:aa:bb:01", "192.168.111.20"), staticHost("52:54:00:aa:bb:02", "192.168.111.21"))
	links := []Link{{Name: "eth0", MAC: "52:54:00:aa:bb:01"}, {Name: "eth1", MAC: "52:54:00:aa:bb:02"}}
	if _, err := InstallNetwork(root, links); err == nil || !strings.Contains(err.Error(), "both name this host's MAC addresses") {
		t.Errorf("two matching dirs: %v", err)
	}
}

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool
