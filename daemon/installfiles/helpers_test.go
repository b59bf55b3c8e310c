package installfiles

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"gopkg.in/yaml.v3"

	"github.com/nodezero/nodezero/configimage/report"
	"github.com/nodezero/nodezero/wire"
)

var testNow = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

const (
	testPullSecret = `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz","email":"a@example.com"}}}`
	testSSHKey     = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKey1 one@example.com\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKey2 two@example.com"
	testBundle     = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
)

// seeded is a deterministic Rand for Input.
func seeded(seed byte) *rand.ChaCha8 {
	var s [32]byte
	s[0] = seed
	return rand.NewChaCha8(s)
}

// testHost is a host with an inventory whose NIC is in 192.168.111.0/24.
func testHost(n int, role wire.HostRole) *wire.Host {
	inv := wire.Inventory{
		Hostname: fmt.Sprintf("inv-%d", n),
		Interfaces: []*wire.Interface{{
			Name:          "eth0",
			MACAddress:    fmt.Sprintf("52:54:00:00:00:%02x", n),
			IPv4Addresses: []string{fmt.Sprintf("192.168.111.%d/24", 10+n)},
		}},
		Boot: &wire.Boot{CurrentBootMode: "uefi"},
	}
	b, _ := json.Marshal(inv)
	return &wire.Host{
		ID:                fmt.Sprintf("00000000-0000-0000-0000-%012d", n),
		Role:              role,
		RequestedHostname: fmt.Sprintf("node-%d", n),
		Inventory:         string(b),
	}
}

// testHosts makes masters then workers; the first master is the bootstrap.
func testHosts(masters, workers int) []*wire.Host {
	var hosts []*wire.Host
	for i := range masters {
		h := testHost(i, wire.HostRoleMaster)
		h.Bootstrap = i == 0
		hosts = append(hosts, h)
	}
	for i := range workers {
		hosts = append(hosts, testHost(masters+i, wire.HostRoleWorker))
	}
	return hosts
}

func testCluster() *wire.Cluster {
	ovn := wire.ClusterNetworkTypeOVNKubernetes
	return &wire.Cluster{
		ID:              "c0ffee00-0000-0000-0000-000000000001",
		Name:            "edge",
		BaseDNSDomain:   "example.com",
		ClusterNetworks: []*wire.ClusterNetwork{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
		ServiceNetworks: []*wire.ServiceNetwork{{CIDR: "172.30.0.0/16"}},
		MachineNetworks: []*wire.MachineNetwork{{CIDR: "192.168.111.0/24"}},
		APIVIPs:         []*wire.APIVIP{{IP: "192.168.111.5"}},
		IngressVIPs:     []*wire.IngressVIP{{IP: "192.168.111.4"}},
		NetworkType:     &ovn,
		SSHPublicKey:    testSSHKey,
		Platform:        &wire.Platform{Type: wire.PlatformTypeBaremetal},
	}
}

// testInput is node zero's case: the config image's /opt/agent/tls as the
// credential source.
func testInput(masters, workers int) Input {
	return Input{
		Cluster:    testCluster(),
		Hosts:      testHosts(masters, workers),
		PullSecret: testPullSecret,
		TLSDir:     imageTLSDir,
		Rand:       seeded(1),
		Now:        testNow,
	}
}

// sno is a single node: user-managed networking, no VIPs.
func snoInput() Input {
	in := testInput(1, 0)
	in.Cluster.Platform = &wire.Platform{Type: wire.PlatformTypeNone}
	in.Cluster.APIVIPs, in.Cluster.IngressVIPs = nil, nil
	return in
}

// parseYAML decodes YAML into a generic tree.
func parseYAML(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("yaml: %v\n%s", err, b)
	}
	return m
}

// parseIgn parses an Ignition config as Ignition does.
func parseIgn(t *testing.T, name string, b []byte) types.Config {
	t.Helper()
	cfg, rpt, err := v3_5.ParseCompatibleVersion(b)
	if err != nil {
		t.Fatalf("%s does not parse: %v\n%s", name, err, rpt)
	}
	return cfg
}

// ignVersion is the spec version a config declares.
func ignVersion(t *testing.T, b []byte) string {
	t.Helper()
	var v struct{ Ignition struct{ Version string } }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.Ignition.Version
}

type ignFileView struct {
	content string
	mode    int
}

// filesOf returns a config's files by path with their decoded content.
func filesOf(t *testing.T, cfg types.Config) map[string]ignFileView {
	t.Helper()
	out := map[string]ignFileView{}
	for _, f := range cfg.Storage.Files {
		v := ignFileView{}
		if f.Mode != nil {
			v.mode = *f.Mode
		}
		if f.Contents.Source != nil {
			v.content = decodeDataURL(t, *f.Contents.Source)
		}
		out[f.Path] = v
	}
	return out
}

func decodeDataURL(t *testing.T, src string) string {
	t.Helper()
	head, data, ok := strings.Cut(strings.TrimPrefix(src, "data:"), ",")
	if !ok || !strings.HasPrefix(src, "data:") {
		t.Fatalf("source %q is not a data URL", src)
	}
	if strings.HasSuffix(head, ";base64") {
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	s, err := url.PathUnescape(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// inputFields lists the Path of every entry of the *report.Invalid err
// is, in the order found.
func inputFields(err error) []string {
	var out []string
	var inv *report.Invalid
	if errors.As(err, &inv) {
		for _, e := range inv.Entries {
			out = append(out, e.Path)
		}
	}
	return out
}
