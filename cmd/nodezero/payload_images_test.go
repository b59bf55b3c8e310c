package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
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

// `nodezero service --payload` refuses a payload without the images before
// it listens (node's TestOverrideImages: the image flags override the
// payload's).
func TestServicePayloadFlag(t *testing.T) {
	dir := writeTestPayload(t, diskwrite.ReleaseImages{})
	err := runService(context.Background(), []string{"--dir", t.TempDir(), "--listen", "127.0.0.1:0", "--payload", dir}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--payload: ") || !strings.Contains(err.Error(), "images.installer: missing") {
		t.Errorf("service --payload without images = %v, want --payload and images.installer named", err)
	}
}

// `nodezero service --cluster-tls-dir` refuses a directory that is not an
// /opt/agent/tls before it listens, naming the flag and the problem.
func TestServiceClusterTLSDirFlag(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin-kubeconfig-signer.crt"), []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := runService(context.Background(), []string{"--dir", t.TempDir(), "--listen", "127.0.0.1:0", "--cluster-tls-dir", dir}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--cluster-tls-dir: ") || !strings.Contains(err.Error(), "admin-kubeconfig-signer") {
		t.Errorf("service --cluster-tls-dir with a bad signer = %v, want the flag and the file named", err)
	}
}
