package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/kube/localapi"
	"github.com/nodezero/nodezero/sim"
	"github.com/nodezero/nodezero/wire"
)

// kubeTools finds the local API's tools, or skips (fails under CI=true,
// where make deps put them in place).
func kubeTools(t *testing.T) localapi.Tools {
	t.Helper()
	tools, err := localapi.FindTools()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("%v", err)
	}
	if tools.Kubectl == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and no kubectl (make deps)")
		}
		t.Skip("no kubectl (make deps)")
	}
	return tools
}

// host is a v2 host at a stage, for the operator gates.
func host(role wire.HostRole, stage wire.HostStage) *wire.Host {
	h := &wire.Host{Role: role, Status: wire.HostStatusInstallingInProgress, Progress: &wire.HostProgressInfo{CurrentStage: stage}}
	if stage == wire.HostStageDone {
		h.Status = wire.HostStatusInstalled
	}
	return h
}

// TestKubeAPIWithConfigImageCredentials: the local API serves the
// credentials of a real `create config-image` run: its admin kubeconfig,
// pointed at the API's address, lists the ClusterVersion (our client and
// kubectl), its CA and client certificate unchanged; then the simulated
// controller's writer takes the operators and the ClusterVersion to
// Available as the hosts finish.
func TestKubeAPIWithConfigImageCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts etcd and kube-apiserver")
	}
	tools := kubeTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "install")
	copyDir(t, filepath.Join("..", "..", "configimage", "inputs", "testdata", "compact"), dir)
	runBinary(t, "create", "config-image", "--dir", dir)
	st, err := loadOrCreateState(dir)
	if err != nil {
		t.Fatal(err)
	}
	kcPath := filepath.Join(dir, "auth", "kubeconfig")
	original, err := os.ReadFile(kcPath)
	if err != nil {
		t.Fatal(err)
	}
	user, err := kube.ParseKubeconfig(original, kcPath)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(user.Server)
	if err != nil {
		t.Fatal(err)
	}
	apiName := u.Hostname()

	var b [2]byte
	rand.Read(b[:])
	addr := netip.AddrFrom4([4]byte{127, 210, 2 + b[0]%250, 2 + b[1]%250})
	api, err := localapi.Start(ctx, localapi.Config{
		Dir: filepath.Join(t.TempDir(), "kube-api"), Addr: addr, Names: []string{apiName},
		ServingSignerCert: []byte(st.SignerCertPEM["kube-apiserver-lb-signer"]), ServingSignerKey: []byte(st.SignerKeyPEM["kube-apiserver-lb-signer"]),
		ClientCA: []byte(st.SignerCertPEM["admin-kubeconfig-signer"]), AdminCert: user.CertData, AdminKey: user.KeyData,
		Cluster: localapi.Cluster{ID: "a-cluster", Version: "4.18.0", Image: "registry.example.com/ocp/release:4.18.0"},
		Tools:   tools,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()

	// The kubeconfig the sandbox gives: the server at the address, the
	// certificate checked for the API's name.
	moved, err := kube.SetServer(original, kcPath, api.URL, apiName)
	if err != nil {
		t.Fatal(err)
	}
	got, err := kube.ParseKubeconfig(moved, kcPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.CAData, user.CAData) || !bytes.Equal(got.CertData, user.CertData) || !bytes.Equal(got.KeyData, user.KeyData) {
		t.Error("the moved kubeconfig's CA or client credentials differ from create config-image's")
	}
	if got.Server != api.URL || got.TLSServerName != apiName {
		t.Errorf("moved kubeconfig: server %s (%s), want %s (%s)", got.Server, got.TLSServerName, api.URL, apiName)
	}
	movedPath := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(movedPath, moved, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClient(got)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cv, err := c.GetClusterVersion(ctx, kube.ClusterVersionName)
	if err != nil {
		t.Fatalf("the admin kubeconfig of create config-image: %v", err)
	}
	if cv.Spec.ClusterID != "a-cluster" || cv.Installed() {
		t.Errorf("ClusterVersion %+v: want a-cluster, installing", cv)
	}
	kubectl := func() string {
		t.Helper()
		out, err := exec.CommandContext(ctx, tools.Kubectl, "--kubeconfig", movedPath, "get", "clusterversion").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get clusterversion: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := kubectl(); !regexp.MustCompile(`(?m)^version\s+False\s+True\s`).MatchString(out) {
		t.Errorf("kubectl get clusterversion:\n%s\nwant version Available False, Progressing True", out)
	}
	// The same name's certificate from another signer (a second
	// create config-image's) is refused.
	other := filepath.Join(t.TempDir(), "install")
	copyDir(t, filepath.Join("..", "..", "configimage", "inputs", "testdata", "compact"), other)
	runBinary(t, "create", "config-image", "--dir", other)
	stranger, err := kube.LoadKubeconfig(filepath.Join(other, "auth", "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := kube.NewClient(&kube.Config{Server: api.URL, TLSServerName: apiName, CAData: user.CAData, CertData: stranger.CertData, KeyData: stranger.KeyData})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, err := sc.GetClusterVersion(ctx, kube.ClusterVersionName); !errors.Is(err, kube.ErrUnauthorized) {
		t.Errorf("another install's admin certificate: %v, want 401", err)
	}

	// The simulated controller, step by step.
	kw := sim.NewStatusWriter(c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m, w := wire.HostRoleMaster, wire.HostRoleWorker
	available := func() []string {
		t.Helper()
		cos, err := c.ListClusterOperators(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, co := range cos {
			if kube.IsTrue(co.Status.Conditions, kube.Available) {
				out = append(out, co.Metadata.Name)
				if co.Version() != "4.18.0" {
					t.Errorf("%s Available at version %q, want 4.18.0", co.Metadata.Name, co.Version())
				}
			}
		}
		return out
	}
	steps := []struct {
		name      string
		cluster   *wire.Cluster
		installed bool
		available int
		progress  string
	}{
		{"masters joined", &wire.Cluster{Status: wire.ClusterStatusInstalling, Hosts: []*wire.Host{host(m, wire.HostStageJoined), host(m, wire.HostStageJoined), host(w, wire.HostStageRebooting)}},
			false, 4, "Working towards 4.18.0: 4 of 12 done (33% complete)"},
		{"masters done", &wire.Cluster{Status: wire.ClusterStatusInstalling, Hosts: []*wire.Host{host(m, wire.HostStageDone), host(m, wire.HostStageDone), host(w, wire.HostStageJoined)}},
			false, 9, "Working towards 4.18.0: 9 of 12 done (75% complete)"},
		{"every host done, not yet finalizing", &wire.Cluster{Status: wire.ClusterStatusInstalling, Hosts: []*wire.Host{host(m, wire.HostStageDone), host(w, wire.HostStageDone)}},
			false, 12, "Working towards 4.18.0: 12 of 12 done (100% complete)"},
		{"finalizing", &wire.Cluster{Status: wire.ClusterStatusFinalizing, Hosts: []*wire.Host{host(m, wire.HostStageDone), host(w, wire.HostStageDone)}},
			true, 12, "Cluster version is 4.18.0"},
	}
	for _, s := range steps {
		installed, err := kw.Sync(ctx, s.cluster)
		if err != nil {
			t.Fatalf("%s: sync: %v", s.name, err)
		}
		cv, err := c.GetClusterVersion(ctx, kube.ClusterVersionName)
		if err != nil {
			t.Fatal(err)
		}
		p := kube.FindCondition(cv.Status.Conditions, kube.Progressing)
		if installed != s.installed || cv.Installed() != s.installed || len(available()) != s.available || p == nil || p.Message != s.progress {
			t.Errorf("%s: sync says installed %v, ClusterVersion %v, %d operators available, progressing %+v; want %v, %d, %q",
				s.name, installed, cv.Installed(), len(available()), p, s.installed, s.available, s.progress)
		}
	}
	if out := kubectl(); !regexp.MustCompile(`(?m)^version\s+4\.18\.0\s+True\s+False\s+\S+\s+Cluster version is 4\.18\.0$`).MatchString(out) {
		t.Errorf("kubectl get clusterversion:\n%s\nwant version 4.18.0 Available True, Progressing False", out)
	}
}
