package addnodes_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/addnodes"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/testbed"
)

// now is the tokens' issue time in these tests.
var now = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

const release = "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64"

// testCA is a base64 PEM certificate, as worker-user-data-managed's data
// URL carries it.
var testCA = base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIBAA==\n-----END CERTIFICATE-----\n"))

func cluster() kube.ClusterInfo {
	return kube.ClusterInfo{
		ClusterID: "6a1b2c3d-0000-4000-8000-0123456789ab", Version: "4.18.0", ReleaseImage: release,
		APIDNSName: "api.ocp.example.com", ClusterName: "ocp", BaseDomain: "example.com",
		PlatformType: "BareMetal", PullSecret: []byte(`{"auths":{"quay.io":{"auth":"ZmFrZTpmYWtl"}}}`),
		Architecture:   "amd64",
		WorkerIgnition: &onhost.WorkerIgnitionEndpoint{URL: "https://api-int.ocp.example.com:22623/config/worker", CACertificate: testCA},
	}
}

// workDir is a directory holding testdata/nodes-config.yaml.
func workDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/nodes-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nodes-config.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func create(t *testing.T, dir string, c kube.ClusterInfo) (*addnodes.Result, []configimage.Member) {
	t.Helper()
	res, err := addnodes.Create(context.Background(), addnodes.Options{Dir: dir, Cluster: c, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := configimage.Read(bytes.NewReader(img), int64(len(img)), configimage.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return res, ms
}

func member(t *testing.T, ms []configimage.Member, p string) []byte {
	t.Helper()
	for _, m := range ms {
		if m.Path == p {
			return m.Data
		}
	}
	t.Fatalf("no member %s", p)
	return nil
}

// wantPaths is the image's members in order: directories first, then the
// files, rendezvous-host.env last.
var wantPaths = []string{
	"/etc", "/etc/NetworkManager", "/etc/NetworkManager/conf.d", "/etc/assisted",
	"/etc/assisted/clusterconfig", "/etc/assisted/hostconfig", "/etc/assisted/hostconfig/extra-worker-0",
	"/etc/assisted/hostconfig/extra-worker-1", "/etc/assisted/hostnames", "/etc/assisted/manifests",
	"/etc/assisted/network", "/etc/assisted/network/host0", "/root", "/root/.docker", "/usr", "/usr/local",
	"/usr/local/share", "/usr/local/share/assisted-service",
	"/etc/assisted/manifests/cluster-image-set.yaml",
	"/etc/assisted/manifests/infraenv.yaml",
	"/etc/assisted/manifests/pull-secret.yaml",
	"/etc/assisted/manifests/nmstateconfig.yaml",
	"/etc/assisted/hostconfig/extra-worker-0/mac_addresses",
	"/etc/assisted/hostconfig/extra-worker-0/role",
	"/etc/assisted/hostconfig/extra-worker-0/root-device-hints.yaml",
	"/etc/assisted/hostnames/52:54:00:00:01:01",
	"/etc/assisted/hostconfig/extra-worker-1/mac_addresses",
	"/etc/assisted/hostconfig/extra-worker-1/role",
	"/etc/assisted/hostnames/52:54:00:00:01:02",
	"/etc/assisted/network/host0/enp1s0.nmconnection",
	"/etc/assisted/network/host0/mac_interface.ini",
	"/usr/local/share/assisted-service/assisted-service.env",
	"/root/.docker/config.json",
	"/etc/NetworkManager/conf.d/clientid.conf",
	"/etc/assisted/add-nodes.env",
	"/etc/assisted/clusterconfig/import-cluster-config.json",
	"/etc/assisted/clusterconfig/worker-ignition-endpoint.json",
	"/etc/assisted/rendezvous-host.env",
}

func paths(ms []configimage.Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Path)
	}
	return out
}

func TestCreateMembers(t *testing.T) {
	dir := workDir(t)
	res, ms := create(t, dir, cluster())
	if diff := cmp.Diff(wantPaths, paths(ms)); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if got, want := res.Path, filepath.Join(dir, "node-config.noarch.iso"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"extra-worker-0", "extra-worker-1"}, res.Hosts); diff != "" {
		t.Errorf("Hosts (-want +got):\n%s", diff)
	}
	st := res.State
	for _, tc := range []struct{ path, want string }{
		{onhost.AddNodesEnvPath, "CLUSTER_ID=6a1b2c3d-0000-4000-8000-0123456789ab\nCLUSTER_NAME=ocp\nCLUSTER_API_VIP_DNS_NAME=api.ocp.example.com\nAUTH_TOKEN_EXPIRY=2025-03-06T05:06:07Z\n"},
		{"/etc/assisted/clusterconfig/import-cluster-config.json", `{"networking":{"userManagedNetworking":false}}`},
		{"/etc/assisted/clusterconfig/worker-ignition-endpoint.json", `{"url":"https://api-int.ocp.example.com:22623/config/worker","ca_certificate":"` + testCA + `"}`},
		{"/etc/assisted/hostconfig/extra-worker-1/role", "worker"},
		{"/etc/assisted/hostconfig/extra-worker-0/role", "worker"},
		{"/etc/assisted/hostnames/52:54:00:00:01:02", "extra-worker-1"},
		{"/root/.docker/config.json", "{\n  \"auths\": {\n    \"quay.io\": {\n      \"auth\": \"ZmFrZTpmYWtl\"\n    }\n  }\n}"},
		{onhost.RendezvousEnvPath, "NODE_ZERO_IP=127.0.0.1\nSERVICE_BASE_URL=http://127.0.0.1:8090/\nIMAGE_SERVICE_BASE_URL=http://127.0.0.1:8888/\n" +
			"PULL_SECRET_TOKEN=" + st.Tokens["agentAuth"] + "\nUSER_AUTH_TOKEN=" + st.UserToken() + "\nWORKFLOW_TYPE=addnodes\n" +
			"AIUI_APP_API_URL=http://127.0.0.1:8090/\nAIUI_URL=http://127.0.0.1:3001/\n"},
	} {
		if diff := cmp.Diff(tc.want, string(member(t, ms, tc.path))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.path, diff)
		}
	}
	// What the host's readers make of them.
	env, err := onhost.ParseAddNodesEnv("add-nodes.env", member(t, ms, onhost.AddNodesEnvPath))
	if err != nil {
		t.Fatal(err)
	}
	if !env.TokenExpiry.Equal(now.Add(48*time.Hour)) || env.Expired(now.Add(47*time.Hour)) || !env.Expired(now.Add(48*time.Hour)) {
		t.Errorf("add-nodes.env expiry %v, want %v", env.TokenExpiry, now.Add(48*time.Hour))
	}
	var wie onhost.WorkerIgnitionEndpoint
	if err := onhost.ParseJSONFile("worker-ignition-endpoint.json", member(t, ms, "/etc/assisted/clusterconfig/worker-ignition-endpoint.json"), &wie); err != nil {
		t.Fatal(err)
	}
	rv, err := onhost.ParseRendezvous("rendezvous-host.env", member(t, ms, onhost.RendezvousEnvPath))
	if err != nil {
		t.Fatal(err)
	}
	if rv.Workflow != onhost.WorkflowAddNodes || rv.NodeZeroIP.String() != "127.0.0.1" {
		t.Errorf("rendezvous-host.env: workflow %q node zero %s, want addnodes and 127.0.0.1", rv.Workflow, rv.NodeZeroIP)
	}
	svc, err := onhost.ParseEnv("assisted-service.env", member(t, ms, onhost.AssistedServiceEnvPath))
	if err != nil {
		t.Fatal(err)
	}
	if svc["INFRA_ENV_ID"] != st.InfraEnvID || svc["USER_AUTH_TOKEN"] != st.UserToken() || svc["WATCHER_AUTH_TOKEN"] != st.WatcherToken() {
		t.Errorf("assisted-service.env: INFRA_ENV_ID %q USER_AUTH_TOKEN %q WATCHER_AUTH_TOKEN %q, want the state's %q, %q, %q",
			svc["INFRA_ENV_ID"], svc["USER_AUTH_TOKEN"], svc["WATCHER_AUTH_TOKEN"], st.InfraEnvID, st.UserToken(), st.WatcherToken())
	}
	if !strings.Contains(svc["RELEASE_IMAGES"], `"url":"`+release+`"`) || !strings.Contains(svc["RELEASE_IMAGES"], `"cpu_architecture":"x86_64"`) {
		t.Errorf("assisted-service.env RELEASE_IMAGES = %s, want the cluster's release for x86_64", svc["RELEASE_IMAGES"])
	}
	// The manifests: the cluster's release, the hosts' network, the
	// cluster's name as the infra-env's cluster.
	for _, tc := range []struct{ path, want string }{
		{"/etc/assisted/manifests/cluster-image-set.yaml", "releaseImage: " + release},
		{"/etc/assisted/manifests/cluster-image-set.yaml", "name: openshift-4.18.0"},
		{"/etc/assisted/manifests/infraenv.yaml", "clusterRef:\n    name: ocp\n"},
		{"/etc/assisted/manifests/infraenv.yaml", "cpuArchitecture: x86_64"},
		{"/etc/assisted/manifests/infraenv.yaml", "sshAuthorizedKey: ssh-ed25519 AAAAC3"},
		{"/etc/assisted/manifests/infraenv.yaml", "infraenvs.agent-install.openshift.io: ocp"},
		{"/etc/assisted/manifests/nmstateconfig.yaml", "ip: 192.168.111.90"},
		{"/etc/assisted/network/host0/mac_interface.ini", "52:54:00:00:01:01=enp1s0"},
	} {
		if got := string(member(t, ms, tc.path)); !strings.Contains(got, tc.want) {
			t.Errorf("%s = %q, want it to contain %q", tc.path, got, tc.want)
		}
	}
	for _, m := range ms {
		if m.Mode.IsRegular() && m.Mode.Perm() != 0o600 && !strings.HasPrefix(m.Path, "/etc/assisted/hostconfig/") {
			t.Errorf("%s: mode %v, want 0600", m.Path, m.Mode.Perm())
		}
	}
	if fi, err := os.Stat(res.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v (%v), want mode 0600", res.Path, fi.Mode(), err)
	}
}

// verify checks token's ES256 signature with the public key in
// assisted-service.env, as the service does, and returns its claims.
func verify(t *testing.T, pubB64, token string) map[string]any {
	t.Helper()
	pubPEM, err := base64.StdEncoding.DecodeString(pubB64)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(pubPEM)
	if blk == nil {
		t.Fatalf("EC_PUBLIC_KEY_PEM %q holds no PEM", pubPEM)
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q: %d parts, want 3", token, len(parts))
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(k.(*ecdsa.PublicKey), sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatalf("token %q does not verify with the image's public key", token)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

func TestCreateTokens(t *testing.T) {
	dir := workDir(t)
	res, ms := create(t, dir, cluster())
	svc, err := onhost.ParseEnv("assisted-service.env", member(t, ms, onhost.AssistedServiceEnvPath))
	if err != nil {
		t.Fatal(err)
	}
	rv, err := onhost.ParseRendezvous("rendezvous-host.env", member(t, ms, onhost.RendezvousEnvPath))
	if err != nil {
		t.Fatal(err)
	}
	exp := float64(now.Add(48 * time.Hour).Unix())
	for _, tc := range []struct{ scheme, token string }{
		{"agentAuth", rv.AgentToken}, {"userAuth", rv.UserToken}, {"watcherAuth", svc["WATCHER_AUTH_TOKEN"]},
	} {
		want := map[string]any{"auth_scheme": tc.scheme, "exp": exp}
		if diff := cmp.Diff(want, verify(t, svc["EC_PUBLIC_KEY_PEM"], tc.token)); diff != "" {
			t.Errorf("%s token claims (-want +got):\n%s", tc.scheme, diff)
		}
	}
	// The caller reads the same user token from the state file.
	st, err := addnodes.LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.UserToken() != rv.UserToken || st.UserToken() != res.State.UserToken() {
		t.Errorf("LoadState(dir).UserToken() = %q, want the image's %q", st.UserToken(), rv.UserToken)
	}
	if fi, err := os.Stat(filepath.Join(dir, addnodes.StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file: %v (%v), want mode 0600", fi.Mode(), err)
	}
}

func TestCreateDeterministic(t *testing.T) {
	dir := workDir(t)
	res, _ := create(t, dir, cluster())
	first, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	// An hour later the tokens (47 h left) are reused: the same bytes.
	res2, err := addnodes.Create(context.Background(), addnodes.Options{Dir: dir, Cluster: cluster(), Now: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(res2.Path)
	if !bytes.Equal(first, second) {
		t.Errorf("a second Create with the same state gave other bytes")
	}
	// A day and a half later (12 h left) new tokens, same key and infra-env.
	res3, err := addnodes.Create(context.Background(), addnodes.Options{Dir: dir, Cluster: cluster(), Now: now.Add(36 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if res3.State.UserToken() == res.State.UserToken() || !res3.State.TokenExpiry.Equal(now.Add(84*time.Hour)) {
		t.Errorf("after 36 h: token reused (%v) or expiry %v, want new tokens expiring at %v",
			res3.State.UserToken() == res.State.UserToken(), res3.State.TokenExpiry, now.Add(84*time.Hour))
	}
	if res3.State.ECPrivateKeyPEM != res.State.ECPrivateKeyPEM || res3.State.InfraEnvID != res.State.InfraEnvID {
		t.Errorf("after 36 h: key or infra-env id changed")
	}
}

// TestCreateLoadsOnHost: a host's loader takes the image and writes the
// add-nodes files where the boot sequence reads them; with a factory
// image's payload of the cluster's release it is accepted, of another
// refused.
func TestCreateLoadsOnHost(t *testing.T) {
	dir := workDir(t)
	res, _ := create(t, dir, cluster())
	img, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, payloadRelease string
		wantErr              error
	}{
		{"no payload", "", nil},
		{"payload of the cluster's release", release, nil},
		{"payload of another release", "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64", configimage.ErrReleaseMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.payloadRelease != "" {
				p := filepath.Join(root, onhost.PayloadDir, onhost.PayloadFile)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(`{"release_image":"`+tc.payloadRelease+`"}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := configimage.Load(bytes.NewReader(img), int64(len(img)), root, configimage.Limits{})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Load: %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			b, err := os.ReadFile(filepath.Join(root, onhost.AddNodesEnvPath))
			if err != nil {
				t.Fatal(err)
			}
			env, err := onhost.ParseAddNodesEnv(onhost.AddNodesEnvPath, b)
			if err != nil || env.ClusterID != cluster().ClusterID || env.APIVIPDNSName != "api.ocp.example.com" {
				t.Errorf("extracted add-nodes.env = %+v (%v)", env, err)
			}
			if _, err := os.Stat(filepath.Join(root, onhost.ClusterConfigDir, onhost.WorkerIgnitionEndpointFile)); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCreateReadByTools reads the image with xorriso and GNU cpio, as
// load-config-iso.sh does: the label, config.gz, and the members in order
// with rendezvous-host.env last.
func TestCreateReadByTools(t *testing.T) {
	xorriso, gnuCpio := testbed.NeedTool(t, "xorriso"), testbed.NeedTool(t, "cpio")
	dir := workDir(t)
	res, _ := create(t, dir, cluster())
	out := run(t, dir, nil, xorriso, "-indev", res.Path, "-pvd_info")
	if !strings.Contains(out, "Volume Id    : agent_configimage") {
		t.Errorf("xorriso -pvd_info:\n%s\nwant Volume Id agent_configimage", out)
	}
	run(t, dir, nil, xorriso, "-osirrox", "on", "-indev", res.Path, "-extract", "/config.gz", filepath.Join(dir, "config.gz"))
	gz, err := os.ReadFile(filepath.Join(dir, "config.gz"))
	if err != nil {
		t.Fatal(err)
	}
	archive := run(t, dir, gz, "gzip", "-dc")
	list := strings.Split(strings.TrimSpace(run(t, dir, []byte(archive), gnuCpio, "-t", "--quiet")), "\n")
	if diff := cmp.Diff(wantPaths, list); diff != "" {
		t.Errorf("cpio -t (-want +got):\n%s", diff)
	}
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, root, []byte(archive), gnuCpio, "-idm", "--quiet", "--no-absolute-filenames")
	b, err := os.ReadFile(filepath.Join(root, onhost.AddNodesEnvPath))
	if err != nil || !strings.Contains(string(b), "AUTH_TOKEN_EXPIRY=2025-03-06T05:06:07Z\n") {
		t.Errorf("cpio extracted add-nodes.env = %q (%v)", b, err)
	}
}

func run(t *testing.T, dir string, stdin []byte, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
