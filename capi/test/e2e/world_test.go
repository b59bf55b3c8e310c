package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/capi/internal/servicetest"
	"github.com/nodezero/nodezero/capi/test/infra"
	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/kube/localapi"
	"github.com/nodezero/nodezero/sandbox/loopback"
	"github.com/nodezero/nodezero/sim"
)

// The world of one scenario, on its own /24 of loopback: what a sandbox
// starts for its hosts (a registry with the release image, DNS for the
// cluster's names, NTP), the payload, the workload cluster (kube/localapi
// on the API VIP, trusting the signers the hub service makes the
// cluster's kubeconfig with, and the machine config server on VIP:22623),
// the hub `nodezero service`, and the host processes (capi/test/infra).

const (
	baseDomain = "nodezero.test"
	// openshiftVersion is the payload's release; k8sVersion the
	// contract's semver of it.
	openshiftVersion = "4.18.0"
	k8sVersion       = "v1.31.0"
	releaseRepo      = "ocp/release"
	releaseTag       = "4.18.0-x86_64"
)

type world struct {
	name    string // the cluster's name
	prefix  netip.Prefix
	vip     netip.Addr // the API VIP: the workload apiserver and the MCS
	ingress netip.Addr
	ntp     netip.Addr
	release string
	pull    string // the pull secret

	svc      *servicetest.Service
	hosts    *infra.Hosts
	workload *kube.Client // the workload apiserver, as its admin
	// clusterID is the workload cluster's ClusterVersion id.
	clusterID string
}

// newWorld starts a scenario's world for a cluster named name, its hosts
// run with hostArgs besides their own; it stops with the test.
func newWorld(t *testing.T, name string, hostArgs ...string) *world {
	t.Helper()
	tools, err := localapi.FindTools()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("%v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w := &world{name: name, prefix: randomPrefix(t)}
	w.vip, w.ingress, w.ntp = w.addr(3), w.addr(5), w.addr(4)
	dir := t.TempDir()

	reg, err := loopback.StartRegistryTLS(ctx, w.addr(2).String()+":0", []loopback.Image{{
		Repo: releaseRepo, Tag: releaseTag,
		Config: []byte(`{"architecture":"amd64","os":"linux","config":{"Labels":{"io.openshift.release":"` + openshiftVersion + `"}}}`),
		Layers: [][]byte{bytes.Repeat([]byte("nodezero e2e release payload\n"), 4096)},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	w.release = reg.Addr + "/" + releaseRepo + ":" + releaseTag
	// The hosts trust the registry's CA as their system's (a hub
	// service's infra-env carries no trust bundle here).
	regCA := filepath.Join(dir, "registry-ca.pem")
	if err := os.WriteFile(regCA, reg.CA(), 0o644); err != nil {
		t.Fatal(err)
	}
	w.pull = `{"auths":{"` + reg.Addr + `":{"auth":"ZTJlOmUyZQ=="}}}`
	domain := name + "." + baseDomain
	dns, err := loopback.StartDNS(ctx, w.addr(1).String()+":0", []loopback.Record{
		{Name: "api." + domain, Addrs: []netip.Addr{w.vip}},
		{Name: "api-int." + domain, Addrs: []netip.Addr{w.vip}},
	}, []loopback.Record{{Name: "apps." + domain, Addrs: []netip.Addr{w.ingress}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	ntp, err := loopback.StartNTP(ctx, w.ntp.String()+":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ntp.Close() })
	payload := makePayload(t, filepath.Join(dir, "payload"), w.release)
	disks, err := os.MkdirTemp("/dev/shm", "nodezero-e2e-disks-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(disks) })

	// The cluster's signers: the service makes the cluster's admin
	// kubeconfig with them, the workload apiserver serves and trusts them.
	tls, err := credentials.NewTLS(nil, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	tlsDir := filepath.Join(dir, "cluster-tls")
	if err := os.MkdirAll(tlsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for n, b := range tls.Files() {
		if err := os.WriteFile(filepath.Join(tlsDir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	adminCert, adminKey, err := tls.IssueAdminClient(nil, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	lb, adminCA := tls.Signers["kube-apiserver-lb-signer"], tls.Signers["admin-kubeconfig-signer"]
	mcs, err := sim.StartMCS(ctx, sim.MCSConfig{Addr: w.vip, ClusterName: name, BaseDomain: baseDomain,
		APICA: lb.CertPEM, ClientCert: adminCert, ClientKey: adminKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mcs.Close() })
	w.clusterID = newUUID(t)
	began := time.Now()
	api, err := localapi.Start(ctx, localapi.Config{
		Dir: filepath.Join(dir, "workload"), Addr: w.vip, Names: []string{"api." + domain, "api-int." + domain},
		ServingSignerCert: lb.CertPEM, ServingSignerKey: lb.KeyPEM, ClientCA: adminCA.CertPEM, AdminCert: adminCert, AdminKey: adminKey,
		Cluster: localapi.Cluster{ID: w.clusterID, Version: openshiftVersion, Image: w.release, Name: name, BaseDomain: baseDomain, Platform: "None",
			PullSecret: []byte(w.pull), WorkerIgnitionURL: mcs.WorkerURL(), WorkerIgnitionCA: mcs.CACert},
		Tools: tools,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	t.Logf("workload apiserver %s up in %s (logs %s, %s)", api.URL, time.Since(began).Round(time.Millisecond), api.APIServerLog, api.EtcdLog)
	kc, err := kube.SetServer(credentials.Kubeconfig(name, baseDomain, tls.CABundle(), adminCert, adminKey), "kubeconfig",
		"https://"+netip.AddrPortFrom(w.vip, 6443).String(), "api."+domain)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kube.ParseKubeconfig(kc, "kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	if w.workload, err = kube.NewClient(cfg, kube.WithTimeout(15*time.Second)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.workload.Close)

	w.svc = servicetest.Start(t, "--payload", payload, "--cluster-tls-dir", tlsDir, "--log-level", "debug")
	w.hosts, err = infra.New(infra.Config{
		Bin: servicetest.Binary(t), Dir: filepath.Join(dir, "machines"), Prefix: w.prefix,
		DNS: dns.Addr, NTP: ntp.Addr, Payload: payload, Kubeconfig: kc, Disks: disks,
		Env: []string{"SSL_CERT_FILE=" + regCA}, Args: hostArgs,
		Logf: func(format string, args ...any) { t.Logf("infra: "+format, args...) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.hosts.Close)
	return w
}

// addr is the address ending in last in the world's /24.
func (w *world) addr(last byte) netip.Addr {
	a := w.prefix.Addr().As4()
	a[3] = last
	return netip.AddrFrom4(a)
}

// randomPrefix is a /24 of 127.0.0.0/8 no other test is likely to use.
func randomPrefix(t *testing.T) netip.Prefix {
	n := func(max int64) byte {
		v, err := rand.Int(rand.Reader, big.NewInt(max))
		if err != nil {
			t.Fatal(err)
		}
		return byte(v.Int64())
	}
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{127, 100 + n(100), 1 + n(250), 0}), 24)
}

func newUUID(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// approveCSRs plays cluster-machine-approver in the workload cluster until
// ctx ends: every pending CSR is approved (the simulated kubelet signs
// it). It returns how many it approved, through the channel, at the end.
func (w *world) approveCSRs(ctx context.Context, t *testing.T) <-chan int {
	out := make(chan int, 1)
	go func() {
		approved := map[string]bool{}
		defer func() { out <- len(approved) }()
		for {
			csrs, err := w.workload.ListCSRs(ctx)
			if err == nil {
				for _, c := range csrs {
					if approved[c.Metadata.Name] || len(c.Status.Conditions) > 0 {
						continue
					}
					if _, err := w.workload.ApproveCSR(ctx, c.Metadata.Name, "NodezeroE2E", "approved by the e2e test (cluster-machine-approver's part)"); err == nil {
						approved[c.Metadata.Name] = true
						t.Logf("approved CSR %s (%s)", c.Metadata.Name, c.Spec.SignerName)
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return out
}

// makePayload writes the factory image's payload into dir, as the
// sandbox makes its own: a 48 MiB generated OS image with a known digest
// and the release.
func makePayload(t *testing.T, dir, release string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	img, err := diskwrite.BuildImage(&raw, diskwrite.ImageSpec{Size: 48 << 20, Seed: 1, IgnitionPartition: "ignition", IgnitionSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "os.raw.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if err := diskwrite.CompressZstd(f, &raw); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	img.File = "os.raw.zst"
	registry, _, _ := strings.Cut(release, "/")
	at := func(repo string) string { return registry + "/ocp/" + repo + ":" + openshiftVersion }
	p := &diskwrite.Payload{ReleaseImage: release, OpenshiftVersion: openshiftVersion, OS: img, Images: diskwrite.ReleaseImages{
		Installer: at("agent-installer-orchestrator"), Controller: at("agent-installer-csr-approver"),
		MCO: at("machine-config-operator"), MustGather: at("must-gather"), Agent: at("agent-installer-node-agent"),
	}}
	if err := diskwrite.WritePayload(dir, p); err != nil {
		t.Fatal(err)
	}
	return dir
}
