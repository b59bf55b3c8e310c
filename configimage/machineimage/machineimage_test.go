package machineimage

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ignv32 "github.com/coreos/ignition/v2/config/v3_2"
	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/inputs"
	"github.com/nodezero/nodezero/onhost"
)

const networkConfig = `interfaces:
- name: enp1s0
  type: ethernet
  state: up
  mac-address: 52:54:00:00:01:01
  ipv4:
    enabled: true
    address:
    - ip: 192.168.111.90
      prefix-length: 24
`

// fullSpec sets every field.
func fullSpec() Spec {
	return Spec{
		ServiceURL: "https://hub.example.com:8090", AgentToken: "agent-token", CAPEM: []byte("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"),
		InfraEnvID: "0b5d4f3e-2c1a-4e8b-9f7d-6a5b4c3d2e1f",
		Machine:    onhost.MachineBinding{Namespace: "ns", Name: "worker-0", UID: "uid-1", Cluster: "c1"},
		Hostname:   "worker-0", RootDeviceHints: inputs.RootDeviceHints{DeviceName: "/dev/vda"},
		Interfaces:    []inputs.Interface{{Name: "enp1s0", MacAddress: "52:54:00:00:01:01"}},
		NetworkConfig: networkConfig, NTPSources: []string{"ntp.example.com"},
		ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64",
	}
}

func paths(ms []configimage.Member) []string {
	var out []string
	for _, m := range ms {
		if m.Mode.IsRegular() {
			out = append(out, m.Path)
		}
	}
	return out
}

// TestMembers: a full spec carries the host config, keyfiles, chrony,
// release, CA, binding and the hub's rendezvous-host.env last; a minimal
// one only the binding and the env file.
func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		want []string
	}{
		{"full", fullSpec(), []string{
			"/etc/assisted/hostconfig/worker-0/mac_addresses",
			"/etc/assisted/hostconfig/worker-0/root-device-hints.yaml",
			"/etc/assisted/hostnames/52:54:00:00:01:01",
			"/etc/assisted/network/host0/enp1s0.nmconnection",
			"/etc/assisted/network/host0/mac_interface.ini",
			configimage.ChronyConfPath, configimage.ClusterImageSetPath, configimage.APICAPath,
			onhost.MachineBindingPath, onhost.RendezvousEnvPath,
		}},
		{"minimal", Spec{ServiceURL: "http://127.0.0.1:8090", AgentToken: "a", InfraEnvID: "ie",
			Machine: onhost.MachineBinding{Namespace: "ns", Name: "m"}},
			[]string{onhost.MachineBindingPath, onhost.RendezvousEnvPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := Members(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, paths(ms)); diff != "" {
				t.Errorf("Members files (-want +got):\n%s", diff)
			}
			last := ms[len(ms)-1]
			rv, err := onhost.ParseRendezvous(last.Path, last.Data)
			if err != nil {
				t.Fatal(err)
			}
			want := onhost.Rendezvous{ServiceBaseURL: tc.spec.ServiceURL, AgentToken: tc.spec.AgentToken, InfraEnvID: tc.spec.InfraEnvID, Workflow: onhost.WorkflowInstall}
			if rv != want {
				t.Errorf("rendezvous-host.env = %+v, want %+v", rv, want)
			}
			if last.Mode.Perm() != 0o600 {
				t.Errorf("rendezvous-host.env mode %v, want 0600 (it holds the agent token)", last.Mode)
			}
			for _, m := range ms {
				if m.Path == onhost.MachineBindingPath {
					if b, err := onhost.ParseMachineBinding(m.Path, m.Data); err != nil || b != tc.spec.Machine {
						t.Errorf("binding = %+v, %v, want %+v", b, err, tc.spec.Machine)
					}
				}
			}
		})
	}
}

// TestImageDeterministicAndLoadable: the same spec gives the same bytes;
// another infra-env gives others; a host loading the image finds the
// hub's env, the binding and its keyfiles under its root.
func TestImageDeterministicAndLoadable(t *testing.T) {
	a, err := Image(fullSpec())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Image(fullSpec())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two images of one spec differ")
	}
	other := fullSpec()
	other.InfraEnvID = "another"
	if c, _ := Image(other); bytes.Equal(a, c) {
		t.Error("images of two infra-envs are equal")
	}
	if len(a) > 1<<20 {
		t.Errorf("image is %d bytes: a Secret holds at most 1 MiB", len(a))
	}
	root := t.TempDir()
	if _, err := configimage.Load(bytes.NewReader(a), int64(len(a)), root, configimage.Limits{}); err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(filepath.Join(root, onhost.RendezvousEnvPath))
	if err != nil {
		t.Fatal(err)
	}
	if rv, err := onhost.ParseRendezvous("env", env); err != nil || rv.InfraEnvID != fullSpec().InfraEnvID {
		t.Errorf("loaded env %+v, %v", rv, err)
	}
	for _, p := range []string{onhost.MachineBindingPath, "/etc/assisted/network/host0/enp1s0.nmconnection", configimage.APICAPath} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("loaded image: %v", err)
		}
	}
}

// TestImagePayloadRelease: a factory image with a payload loads the image
// only when ReleaseImage names the payload's release.
func TestImagePayloadRelease(t *testing.T) {
	root := t.TempDir()
	pl := filepath.Join(root, onhost.PayloadDir, onhost.PayloadFile)
	if err := os.MkdirAll(filepath.Dir(pl), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pl, []byte(`{"release_image":"quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := Image(fullSpec())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := configimage.Load(bytes.NewReader(img), int64(len(img)), root, configimage.Limits{}); err != nil {
		t.Errorf("the payload's release: %v", err)
	}
	s := fullSpec()
	s.ReleaseImage = "quay.io/other:1"
	img, _ = Image(s)
	if _, err := configimage.Load(bytes.NewReader(img), int64(len(img)), t.TempDir(), configimage.Limits{}); err != nil {
		t.Errorf("no payload: %v", err)
	}
	if _, err := configimage.Load(bytes.NewReader(img), int64(len(img)), root, configimage.Limits{}); err == nil {
		t.Error("another release loaded on a payload host")
	}
}

// TestIgnition: coreos/ignition's parser accepts the config with no
// report entries, and it writes every file of the image with its data
// and mode, deterministically.
func TestIgnition(t *testing.T) {
	b, err := Ignition(fullSpec())
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Ignition(fullSpec()); !bytes.Equal(b, again) {
		t.Error("two Ignition configs of one spec differ")
	}
	cfg, rpt, err := ignv32.Parse(b)
	if err != nil || len(rpt.Entries) > 0 {
		t.Fatalf("ignition parse: %v\n%s", err, rpt)
	}
	ms, _ := Members(fullSpec())
	want := map[string]configimage.Member{}
	for _, m := range ms {
		if m.Mode.IsRegular() {
			want[m.Path] = m
		}
	}
	if len(cfg.Storage.Files) != len(want) {
		t.Errorf("ignition writes %d files, the image has %d", len(cfg.Storage.Files), len(want))
	}
	for _, f := range cfg.Storage.Files {
		m, ok := want[f.Path]
		if !ok {
			t.Errorf("ignition writes %s, not in the image", f.Path)
			continue
		}
		src := *f.Contents.Source
		data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(src, "data:;base64,"))
		if err != nil || !bytes.Equal(data, m.Data) {
			t.Errorf("%s: data %q (%v), want %q", f.Path, data, err, m.Data)
		}
		if f.Mode == nil || *f.Mode != int(m.Mode.Perm()) {
			t.Errorf("%s: mode %v, want %o", f.Path, f.Mode, m.Mode.Perm())
		}
	}
	if last := cfg.Storage.Files[len(cfg.Storage.Files)-1].Path; last != onhost.RendezvousEnvPath {
		t.Errorf("last file %s, want %s", last, onhost.RendezvousEnvPath)
	}
}

// TestSpecErrors: every missing field is named in one error.
func TestSpecErrors(t *testing.T) {
	_, err := Image(Spec{ServiceURL: "ftp://x", NetworkConfig: networkConfig})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"serviceURL", "agentToken: required", "infraEnvID: required", "machine.namespace: required", "machine.name: required", "networkConfig: needs interfaces"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	s := fullSpec()
	s.NetworkConfig = "interfaces: [{name: enp1s0, type: ethernet, state: up, ipv4: {enabled: true, address: [{ip: not-an-ip, prefix-length: 24}]}}]"
	if _, err := Image(s); err == nil || !strings.Contains(err.Error(), "networkConfig") {
		t.Errorf("bad nmstate: %v", err)
	}
	s = fullSpec()
	s.AgentToken = "a\nINFRA_ENV_ID=evil"
	if _, err := Image(s); err == nil || !strings.Contains(err.Error(), "agentToken: must be one line") {
		t.Errorf("token with a newline: %v", err)
	}
}

// TestImageUnpinnedRelease: an image without ReleaseImage loads on a
// factory image with a payload or a cluster-image-set.yaml of its own (the
// hub's cluster chooses the release).
func TestImageUnpinnedRelease(t *testing.T) {
	s := fullSpec()
	s.ReleaseImage = ""
	img, err := Image(s)
	if err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string]string{
		"payload":           filepath.Join(onhost.PayloadDir, onhost.PayloadFile),
		"cluster image set": configimage.ClusterImageSetPath,
	} {
		root := t.TempDir()
		p := filepath.Join(root, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"release_image":"quay.io/x:1"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := configimage.Load(bytes.NewReader(img), int64(len(img)), root, configimage.Limits{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
