package configimage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nodezero/nodezero/onhost"
)

func sampleImage(t *testing.T, release string) []byte {
	t.Helper()
	img, err := Build([]Member{
		{Path: "/etc/assisted/manifests", Mode: os.ModeDir | 0o755},
		{Path: ClusterImageSetPath, Mode: 0o644, Data: []byte("spec:\n  releaseImage: " + release + "\n")},
		{Path: "/usr/local/share/start-cluster/start-cluster.env", Mode: 0o644, Data: onhost.StartClusterEnv(3, 0)},
		{Path: onhost.RendezvousEnvPath, Mode: 0o644, Data: []byte("NODE_ZERO_IP=192.168.111.80\n")},
	}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestLoadChecksTheRelease(t *testing.T) {
	img := sampleImage(t, "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64")
	root := t.TempDir()
	// A factory image baked with another release refuses it and writes nothing.
	cis := filepath.Join(root, ClusterImageSetPath)
	if err := os.MkdirAll(filepath.Dir(cis), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cis, []byte("spec:\n  releaseImage: quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(bytes.NewReader(img), int64(len(img)), root, Limits{})
	if !errors.Is(err, ErrReleaseMismatch) {
		t.Fatalf("Load with another release = %v, want ErrReleaseMismatch", err)
	}
	if want := `image has release "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", host has "quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64"`; !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("error %q does not name both releases", err)
	}
	if _, err := os.Stat(filepath.Join(root, onhost.RendezvousEnvPath)); !os.IsNotExist(err) {
		t.Errorf("rendezvous-host.env written despite the mismatch: %v", err)
	}
	// The same release is taken.
	if err := os.WriteFile(cis, []byte("spec:\n  releaseImage: quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := Load(bytes.NewReader(img), int64(len(img)), root, Limits{})
	if err != nil || len(ms) != 4 {
		t.Fatalf("Load = %d members, %v", len(ms), err)
	}
	if b, err := os.ReadFile(filepath.Join(root, onhost.RendezvousEnvPath)); err != nil || string(b) != "NODE_ZERO_IP=192.168.111.80\n" {
		t.Errorf("rendezvous-host.env = %q, %v", b, err)
	}
}

// TestLoadChecksThePayloadRelease: a factory image carries no
// cluster-image-set.yaml of its own, but its payload names the release it
// installs; a config image for another release is refused and nothing is
// written (found on a VM: any release was taken), the same release is
// taken.
func TestLoadChecksThePayloadRelease(t *testing.T) {
	const ours = "registry.example:5000/ocp/release:4.18.0-x86_64"
	root := t.TempDir()
	pj := filepath.Join(root, onhost.PayloadDir, onhost.PayloadFile)
	if err := os.MkdirAll(filepath.Dir(pj), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pj, []byte(`{"release_image":"`+ours+`","openshift_version":"4.18.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := sampleImage(t, "registry.example:5000/ocp/release:4.19.0-x86_64")
	_, err := Load(bytes.NewReader(other), int64(len(other)), root, Limits{})
	if !errors.Is(err, ErrReleaseMismatch) {
		t.Fatalf("Load of another release on a factory host = %v, want ErrReleaseMismatch", err)
	}
	if want := `image has release "registry.example:5000/ocp/release:4.19.0-x86_64", this factory image installs "` + ours + `"`; !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("error %q does not name both releases", err)
	}
	if _, err := os.Stat(filepath.Join(root, onhost.RendezvousEnvPath)); !os.IsNotExist(err) {
		t.Errorf("rendezvous-host.env written despite the mismatch: %v", err)
	}
	same := sampleImage(t, ours)
	if _, err := Load(bytes.NewReader(same), int64(len(same)), root, Limits{}); err != nil {
		t.Fatalf("Load of the payload's release = %v, want it taken", err)
	}
	// No payload (a workstation's --root): nothing to compare with.
	if _, err := Load(bytes.NewReader(other), int64(len(other)), t.TempDir(), Limits{}); err != nil {
		t.Errorf("Load without a payload = %v, want it taken", err)
	}
}

func TestFindByLabel(t *testing.T) {
	root := t.TempDir()
	img := sampleImage(t, "x")
	for name, data := range map[string][]byte{"sr0": img, "sda": bytes.Repeat([]byte{0}, 64<<10), "loop0": nil} {
		if err := os.MkdirAll(filepath.Join(root, "sys", "class", "block", name), 0o755); err != nil {
			t.Fatal(err)
		}
		if data == nil {
			continue // listed but no device node
		}
		if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "dev", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := FindByLabel(root, VolumeLabel)
	if err != nil || len(got) != 1 || got[0] != filepath.Join(root, "dev", "sr0") {
		t.Errorf("FindByLabel = %v, %v; want only sr0", got, err)
	}
}
