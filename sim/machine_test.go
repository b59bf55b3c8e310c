package sim

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/onhost"
)

// A Cluster API Machine's host: no binding, no registration; a bad binding
// is an error naming the file; with a binding and the cluster's kubeconfig
// the host registers its Node, named as its Machine, Ready, with the
// Machine's providerID and its role's labels.
func TestMachineNode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := t.TempDir()
	d := &onhost.BootDisk{Role: "master"}
	addrs := []netip.Prefix{netip.MustParsePrefix("127.0.0.9/24")}
	if reg, err := NodeRegistration(root, d, addrs, testLog(t)); err != nil || reg != nil {
		t.Fatalf("no binding: registration %v, %v; want none", reg != nil, err)
	}
	write := func(path string, b []byte) {
		t.Helper()
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(onhost.MachineBindingPath, []byte(`{"namespace":"ns1"}`))
	if _, err := MachineProviderID(root); err == nil {
		t.Fatal("a binding without a name: no error")
	}
	write(onhost.MachineBindingPath, onhost.MachineBinding{Namespace: "ns1", Name: "cp-0", Cluster: "c1"}.Marshal())
	if id, err := MachineProviderID(root); err != nil || id != "nodezero://ns1/cp-0" {
		t.Fatalf("MachineProviderID = %q, %v; want nodezero://ns1/cp-0", id, err)
	}
	if reg, err := NodeRegistration(root, d, addrs, testLog(t)); err != nil || reg != nil {
		t.Fatalf("no kubeconfig: registration %v, %v; want none (no workload API)", reg != nil, err)
	}

	cl := startCluster(t, ctx)
	write(KubeconfigPath, cl.kubeconfig)
	reg, err := NodeRegistration(root, d, addrs, testLog(t))
	if err != nil || reg == nil {
		t.Fatalf("registration %v, %v; want one", reg != nil, err)
	}
	for range 2 { // a restarted host finds its Node
		if err := reg(ctx); err != nil {
			t.Fatal(err)
		}
	}
	n, err := cl.admin.GetNode(ctx, "cp-0")
	if err != nil {
		t.Fatal(err)
	}
	_, cp := n.Metadata.Labels[kube.LabelControlPlaneRole]
	if n.Spec.ProviderID != "nodezero://ns1/cp-0" || !kube.NodeReady(n) || !cp {
		t.Errorf("Node cp-0: providerID %q, ready %v, control-plane label %v; want nodezero://ns1/cp-0, Ready, labelled", n.Spec.ProviderID, kube.NodeReady(n), cp)
	}
}
