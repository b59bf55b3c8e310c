package node_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/node"
)

// writeTestPayload writes a payload with a 512-byte OS image and images.
func writeTestPayload(t *testing.T, images diskwrite.ReleaseImages) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "os.raw"), make([]byte, 512), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &diskwrite.Payload{ReleaseImage: "quay.io/ocp/release:4.18.0", OpenshiftVersion: "4.18.0", Images: images,
		OS: diskwrite.Image{File: "os.raw", SHA256: strings.Repeat("ab", 32), Size: 512, IgnitionPartition: "ignition"}}
	if err := diskwrite.WritePayload(dir, p); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Node zero's service names the payload's images in its install steps; a
// payload without them is refused with payload.json and the field named.
func TestPayloadImages(t *testing.T) {
	full := diskwrite.ReleaseImages{Installer: "quay.io/ocp/installer:4.18.0", Controller: "quay.io/ocp/controller:4.18.0",
		MCO: "quay.io/ocp/mco:4.18.0", MustGather: "quay.io/ocp/must-gather:4.18.0", Agent: "quay.io/ocp/agent:4.18.0"}
	got, err := node.PayloadImages(writeTestPayload(t, full))
	if err != nil {
		t.Fatalf("payloadImages: %v", err)
	}
	want := assisted.InstallImages{Installer: full.Installer, Controller: full.Controller, MCO: full.MCO, MustGather: full.MustGather, Agent: full.Agent}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PayloadImages (-want +got):\n%s", diff)
	}

	noMCO := full
	noMCO.MCO = ""
	dir := writeTestPayload(t, noMCO)
	_, err = node.PayloadImages(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "payload.json")+": images.mco: missing") {
		t.Errorf("PayloadImages without an MCO image = %v, want the file and images.mco named", err)
	}
	if _, err := node.PayloadImages(t.TempDir()); err == nil {
		t.Error("PayloadImages of a directory without payload.json succeeded")
	}
}

// The image flags of `nodezero service` override the payload's.
func TestOverrideImages(t *testing.T) {
	base := assisted.InstallImages{Installer: "a/installer:1", Controller: "a/controller:1", MCO: "a/mco:1", MustGather: "a/mg:1"}
	got := node.OverrideImages(base, assisted.InstallImages{MCO: "b/mco:2", Agent: "b/agent:2"})
	want := assisted.InstallImages{Installer: "a/installer:1", Controller: "a/controller:1", MCO: "b/mco:2", MustGather: "a/mg:1", Agent: "b/agent:2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OverrideImages (-want +got):\n%s", diff)
	}
}
