package node

import (
	"context"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/addnodes"
	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/internal/pki"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// nodesConfig adds two workers; the test host is the first.
const nodesConfig = `hosts:
- hostname: extra-worker-0
  interfaces:
  - name: enp1s0
    macAddress: 52:54:00:00:01:01
  rootDeviceHints:
    deviceName: /dev/vda
- hostname: extra-worker-1
  interfaces:
  - name: enp1s0
    macAddress: 52:54:00:00:01:02
`

var issued = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// addedHostRoot is a host root holding what a node config image made by
// addnodes.Create carries, loaded as a host loads it.
func addedHostRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nodes-config.yaml"), []byte(nodesConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	ca, _, _, err := pki.NewServer("machine-config-server-ca", nil, []string{"api-int.ocp.example.com"}, issued, issued.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	res, err := addnodes.Create(context.Background(), addnodes.Options{Dir: dir, Now: issued, Cluster: kube.ClusterInfo{
		ClusterID: "6a1b2c3d-0000-4000-8000-0123456789ab", Version: "4.18.0", ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64",
		APIDNSName: "api.ocp.example.com", ClusterName: "ocp", BaseDomain: "example.com", PlatformType: "BareMetal",
		PullSecret: []byte(`{"auths":{"quay.io":{"auth":"ZmFrZTpmYWtl"}}}`), Architecture: "amd64",
		WorkerIgnition: &onhost.WorkerIgnitionEndpoint{URL: "https://api-int.ocp.example.com:22623/config/worker",
			CACertificate: base64.StdEncoding.EncodeToString(pki.CertPEM(ca.Cert))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if _, err := configimage.Load(f, fi.Size(), root, configimage.Limits{}); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestNodeZeroAddNodes: on a host booted from a node config image, node
// zero's service imports the installed cluster through the image's own
// files and waits for this host; with an expired token it imports
// nothing and says so. The agent's URL is the service's own listener,
// whatever SERVICE_BASE_URL's loopback port says.
func TestNodeZeroAddNodes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		now      time.Time
		wantLine string
	}{
		{"token valid", issued.Add(time.Hour), "Waiting for the host to be ready"},
		{"token expired", issued.Add(addnodes.DefaultTokenTTL), boot.MsgTokenExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := addedHostRoot(t)
			env, err := boot.ReadEnv(root)
			if err != nil {
				t.Fatal(err)
			}
			if env.AddNodes == nil || !env.OwnService() {
				t.Fatalf("env %+v: want add-nodes.env and a rendezvous address of its own", env)
			}
			env.NodeZero, env.MACs = true, []string{"52:54:00:00:01:01"}
			lines := make(chan string, 1)
			ctx, cancel := context.WithCancel(context.Background())
			nz := &NodeZero{Root: root, Listen: "127.0.0.1:0", DataDir: t.TempDir(), Payload: t.TempDir(),
				Board: issue.NewBoard(root), Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return tc.now },
				Status: func(s string) {
					if s == tc.wantLine {
						select {
						case lines <- s:
						default:
						}
					}
				}}
			done := make(chan error, 1)
			go func() { done <- nz.Run(ctx, env) }()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil && ctx.Err() == nil {
					t.Errorf("node zero: %v", err)
				}
			})
			base, err := nz.URL(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if base == strings.TrimSuffix(env.ServiceBaseURL, "/") {
				t.Fatalf("the service listens at SERVICE_BASE_URL's %s: the test proves nothing", base)
			}
			select {
			case <-lines:
			case err := <-done:
				t.Fatalf("node zero ended before %q: %v", tc.wantLine, err)
			}
			c, err := wire.NewClient(base, wire.WithUserToken(env.UserToken))
			if err != nil {
				t.Fatal(err)
			}
			clusters, err := c.ListClusters(ctx)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(root, issue.MotdDir, string(issue.KeyToken)))
			if tc.wantLine == boot.MsgTokenExpired {
				if len(clusters) != 0 {
					t.Errorf("clusters %v: an expired token imports nothing", clusters)
				}
				if !strings.Contains(string(b), "oc adm node-image create") {
					t.Errorf("65_token = %q, want ABI's text", b)
				}
				return
			}
			if len(b) != 0 {
				t.Errorf("65_token = %q with a valid token", b)
			}
			if len(clusters) != 1 || clusters[0].Kind != wire.ClusterKindAddHostsCluster || clusters[0].Name != "ocp" ||
				clusters[0].IgnitionEndpoint == nil || *clusters[0].IgnitionEndpoint.URL != "https://api-int.ocp.example.com:22623/config/worker" {
				t.Fatalf("clusters %+v: want the imported ocp with its worker ignition endpoint", clusters)
			}
			ies, err := c.ListInfraEnvs(ctx, "")
			if err != nil || len(ies) != 1 || ies[0].ClusterID != clusters[0].ID {
				t.Errorf("infra-envs %+v (%v): want one bound to the imported cluster", ies, err)
			}
			add, _ := os.ReadFile(filepath.Join(root, issue.MotdDir, string(issue.KeyAddNode)))
			if !strings.HasPrefix(string(add), "Waiting for the host to be ready") {
				t.Errorf("90_add-node = %q", add)
			}
			if _, err := os.Stat(filepath.Join(root, configimage.ManifestsDir, "cluster-deployment.yaml")); err == nil {
				t.Error("the node config image carries a ClusterDeployment: the test's premise is wrong")
			}
		})
	}
}
