package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/configimage"
)

// TestHostReleaseImage: the ClusterImageSet wins, the payload follows, and
// a broken ClusterImageSet is an error naming the file.
func TestHostReleaseImage(t *testing.T) {
	root := t.TempDir()
	payload := filepath.Join(root, "payload")
	if _, err := hostReleaseImage(root, payload); err == nil {
		t.Error("no ClusterImageSet and no payload: want an error")
	}
	writeFile(t, filepath.Join(payload, "os.img"), strings.Repeat("\x00", 512))
	writeFile(t, filepath.Join(payload, "payload.json"), `{"release_image":"quay.io/ocp/release:from-payload","openshift_version":"4.18","os_image":{"file":"os.img","sha256":"`+strings.Repeat("0", 64)+`","size":512,"ignition_partition":"boot"}}`)
	if got, err := hostReleaseImage(root, payload); err != nil || got != "quay.io/ocp/release:from-payload" {
		t.Errorf("payload: %q, %v", got, err)
	}
	cis := filepath.Join(root, configimage.ClusterImageSetPath)
	writeFile(t, cis, "apiVersion: hive.openshift.io/v1\nkind: ClusterImageSet\nspec:\n  releaseImage: quay.io/ocp/release:from-cis\n")
	if got, err := hostReleaseImage(root, payload); err != nil || got != "quay.io/ocp/release:from-cis" {
		t.Errorf("cluster image set: %q, %v", got, err)
	}
	writeFile(t, cis, "spec: [\n")
	if _, err := hostReleaseImage(root, payload); err == nil || !strings.Contains(err.Error(), cis) {
		t.Errorf("broken cluster image set: %v, want an error naming %s", err, cis)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostTrustBundle: the console's checks trust the cluster's additional
// trust bundle from the InfraEnv manifest a config image lays, as the
// agents' image check does (found on a VM: the sandbox registry's
// certificate was "signed by unknown authority" on the console only).
func TestHostTrustBundle(t *testing.T) {
	root := t.TempDir()
	if got := hostTrustBundle(root); got != nil {
		t.Fatalf("no manifest: got %q, want nil", got)
	}
	pem := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
	writeFile(t, filepath.Join(root, infraEnvManifest), "apiVersion: agent-install.openshift.io/v1beta1\nkind: InfraEnv\nspec:\n  additionalTrustBundle: |\n    "+strings.ReplaceAll(pem, "\n", "\n    ")+"\n")
	if got := string(hostTrustBundle(root)); strings.TrimSpace(got) != pem {
		t.Errorf("got %q, want the manifest's bundle %q", got, pem)
	}
	writeFile(t, filepath.Join(root, infraEnvManifest), "kind: InfraEnv\nspec: {}\n")
	if got := hostTrustBundle(root); got != nil {
		t.Errorf("no bundle in the manifest: got %q, want nil", got)
	}
}
