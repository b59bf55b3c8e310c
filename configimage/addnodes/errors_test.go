package addnodes_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/configimage/addnodes"
	"github.com/nodezero/nodezero/configimage/report"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/onhost"
)

// TestCreateErrors: every bad input is refused with a message naming where
// it is wrong, and nothing is written.
func TestCreateErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nodes   func(string) string // edits testdata/nodes-config.yaml; nil removes it
		cluster func(*kube.ClusterInfo)
		wantIs  error
		want    []string // substrings of the error
	}{
		{name: "no nodes-config.yaml", nodes: nil,
			want: []string{"nodes-config.yaml not found: it lists the hosts to add"}},
		{name: "unknown key", nodes: func(s string) string { return strings.Replace(s, "  rootDeviceHints:\n", "  rootDeviceHint:\n", 1) },
			wantIs: report.ErrInvalid,
			want:   []string{`nodes-config.yaml:7:3: hosts[0].rootDeviceHint: unknown field "rootDeviceHint"; did you mean "rootDeviceHints"?`}},
		{name: "two errors at once", nodes: func(s string) string {
			return strings.Replace(strings.Replace(s, "  role: worker\n", "  role: master\n", 1), "macAddress: 52:54:00:00:01:02", "macAddress: 52:54:00:00:01:01", 1) +
				"cpuArchitecture: s390x\n"
		},
			wantIs: report.ErrInvalid,
			want: []string{`nodes-config.yaml:3:9: hosts[0].role: Unsupported value: "master": supported values: "worker"`,
				`nodes-config.yaml:23:17: hosts[1].interfaces[0].macAddress: Invalid value: "52:54:00:00:01:01": duplicate MAC address found`,
				`nodes-config.yaml:25:18: cpuArchitecture: Invalid value: "s390x": the cluster's control-plane Nodes are amd64`}},
		{name: "architecture differs from the cluster's", nodes: func(s string) string { return s + "cpuArchitecture: arm64\n" },
			wantIs: report.ErrInvalid,
			want:   []string{`nodes-config.yaml:25:18: cpuArchitecture: Invalid value: "arm64": the cluster's control-plane Nodes are amd64`}},
		{name: "cluster lacks everything", cluster: func(c *kube.ClusterInfo) { *c = kube.ClusterInfo{Architecture: "amd64"} },
			wantIs: addnodes.ErrCluster,
			want: []string{"ClusterVersion version: spec.clusterID is empty", "ClusterVersion version: status.history[0].image is empty",
				"ClusterVersion version: status.history[0].version is empty", "Infrastructure cluster: status.apiServerURL names no host",
				"Secret openshift-config/pull-secret: data[.dockerconfigjson] is empty"}},
		{name: "api name not api.<cluster>.<domain>", cluster: func(c *kube.ClusterInfo) { c.APIDNSName, c.ClusterName, c.BaseDomain = "kube.example.com", "", "" },
			wantIs: addnodes.ErrCluster,
			want:   []string{`Infrastructure cluster: status.apiServerURL's host "kube.example.com" is not api.<cluster>.<base domain>`}},
		{name: "pull secret not JSON", cluster: func(c *kube.ClusterInfo) { c.PullSecret = []byte("{nope") },
			wantIs: addnodes.ErrCluster,
			want:   []string{"Secret openshift-config/pull-secret: data[.dockerconfigjson] is not JSON"}},
		{name: "worker ignition CA not PEM", cluster: func(c *kube.ClusterInfo) {
			c.WorkerIgnition = &onhost.WorkerIgnitionEndpoint{URL: "https://api-int.ocp.example.com:22623/config/worker", CACertificate: "bm90IGEgY2VydA=="}
		},
			wantIs: addnodes.ErrCluster,
			want:   []string{"Secret openshift-machine-api/worker-user-data-managed: userData's ignition.security.tls.certificateAuthorities[0] holds no PEM certificate"}},
		{name: "no architecture anywhere", cluster: func(c *kube.ClusterInfo) { c.Architecture = "" },
			wantIs: report.ErrInvalid,
			want:   []string{"cpuArchitecture: Required value: the cluster's architecture is unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.nodes != nil || tc.cluster != nil {
				b, err := os.ReadFile("testdata/nodes-config.yaml")
				if err != nil {
					t.Fatal(err)
				}
				text := string(b)
				if tc.nodes != nil {
					text = tc.nodes(text)
				}
				if err := os.WriteFile(filepath.Join(dir, "nodes-config.yaml"), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c := cluster()
			if tc.cluster != nil {
				tc.cluster(&c)
			}
			_, err := addnodes.Create(context.Background(), addnodes.Options{Dir: dir, Cluster: c, Now: now})
			if err == nil {
				t.Fatal("Create = nil error, want one")
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("Create: %v, want errors.Is %v", err, tc.wantIs)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Create: %v\nwant it to contain %q", err, w)
				}
			}
			for _, f := range []string{addnodes.ImageName, addnodes.StateFile} {
				if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s written after a failure (%v)", f, err)
				}
			}
		})
	}
}

func TestCreateUserManagedNetworkingAndNoEndpoint(t *testing.T) {
	dir := workDir(t)
	c := cluster()
	c.PlatformType, c.UserManagedNetworking, c.WorkerIgnition = "None", true, nil
	_, ms := create(t, dir, c)
	if got, want := string(member(t, ms, "/etc/assisted/clusterconfig/import-cluster-config.json")), `{"networking":{"userManagedNetworking":true}}`; got != want {
		t.Errorf("import-cluster-config.json = %s, want %s", got, want)
	}
	for _, m := range ms {
		if strings.HasSuffix(m.Path, onhost.WorkerIgnitionEndpointFile) {
			t.Errorf("%s written for a cluster without a worker ignition endpoint", m.Path)
		}
	}
	if ms[len(ms)-1].Path != onhost.RendezvousEnvPath {
		t.Errorf("last member %s, want %s", ms[len(ms)-1].Path, onhost.RendezvousEnvPath)
	}
}

func TestLoadStateMissing(t *testing.T) {
	_, err := addnodes.LoadState(t.TempDir())
	if !errors.Is(err, addnodes.ErrNoState) {
		t.Errorf("LoadState(empty dir) = %v, want ErrNoState", err)
	}
}
