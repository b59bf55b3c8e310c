package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/assisted/assistedtest"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/gather"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sim/simagent"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// The gather tests build a node-zero root the way a host gets one: a
// config image made by `create config-image` from the committed inputs and
// loaded with `load-config-image`, and node zero's real service (SQLite
// store, assisted service, API) running on that root's data directory
// with a registered cluster and three hosts. Secrets of every kind are
// planted in the inputs, the files and the logs; the bundle is opened with
// archive/tar and compress/gzip and every entry is searched for them.

// Planted secrets: unique strings that must never reach a bundle.
const (
	plantedUser  = "gather-robot"
	plantedPass  = "Pl4nted-Registry-Passw0rd"
	plantedPSK   = "planted wifi psk phrase"
	planted8021x = "Planted-8021x-Password"
	// The body of an SSH private key, as ssh-keygen writes it.
	plantedSSHBody = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
)

// gatherBundle reads a bundle: its top directory and its entries by name
// under it.
func gatherBundle(t *testing.T, data []byte) (string, map[string]string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the bundle is not gzip: %v", err)
	}
	tr := tar.NewReader(zr)
	top, files := "", map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the bundle is not a tar: %v", err)
		}
		dir, name, _ := strings.Cut(hdr.Name, "/")
		if top == "" {
			top = dir
		}
		if dir != top {
			t.Errorf("entry %s is not under %s/", hdr.Name, top)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	return top, files
}

// nodeZeroRoot is a node-zero host root with its config image loaded,
// planted secrets, and the service running on its data directory.
type nodeZeroRoot struct {
	root    string
	secrets map[string]string // what → value
	sshPub  string
	cluster string
}

func newNodeZeroRoot(t *testing.T, ctx context.Context) *nodeZeroRoot {
	t.Helper()
	n := &nodeZeroRoot{secrets: map[string]string{}}
	auth64 := base64.StdEncoding.EncodeToString([]byte(plantedUser + ":" + plantedPass))
	pullSecret := `{"auths":{"registry.example.com:5000":{"auth":"` + auth64 + `","email":"gather@example.com"}}}`
	n.secrets["pull secret auth"] = auth64
	n.secrets["registry password"] = plantedPass

	// The config image, from inputs with the planted pull secret.
	dir := filepath.Join(t.TempDir(), "install")
	copyDir(t, filepath.Join("..", "..", "configimage", "inputs", "testdata", "static"), dir)
	icPath := filepath.Join(dir, "install-config.yaml")
	ic, err := os.ReadFile(icPath)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(ic), "\n") {
		if strings.HasPrefix(l, "pullSecret:") {
			l = "pullSecret: '" + pullSecret + "'"
		}
		if v, ok := strings.CutPrefix(l, "sshKey: "); ok {
			n.sshPub = v
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(icPath, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"create", "config-image", "--dir", dir}, io.Discard, io.Discard); err != nil {
		t.Fatalf("create config-image: %v", err)
	}
	pass, err := os.ReadFile(filepath.Join(dir, "auth", "kubeadmin-password"))
	if err != nil {
		t.Fatal(err)
	}
	n.secrets["kubeadmin password"] = string(pass)

	// A sandbox-like host: hosts/master-0/{root,run.log}.
	hostDir := filepath.Join(t.TempDir(), "hosts", "master-0")
	n.root = filepath.Join(hostDir, "root")
	if err := run(ctx, []string{"load-config-image", "--root", n.root, "--file", filepath.Join(dir, "agentconfig.noarch.iso")}, io.Discard, io.Discard); err != nil {
		t.Fatalf("load-config-image: %v", err)
	}
	rv := readEnv(t, filepath.Join(n.root, onhost.RendezvousEnvPath))
	svcEnv := readEnv(t, filepath.Join(n.root, onhost.AssistedServiceEnvPath))
	n.secrets["agent token"] = rv["PULL_SECRET_TOKEN"]
	n.secrets["user token"] = rv["USER_AUTH_TOKEN"]
	n.secrets["watcher token"] = svcEnv["WATCHER_AUTH_TOKEN"]
	for what, v := range n.secrets {
		if v == "" {
			t.Fatalf("the config image has no %s", what)
		}
	}
	// The image's own private keys and password hash.
	keys, _ := filepath.Glob(filepath.Join(n.root, configimage.TLSDir, "*.key"))
	if len(keys) == 0 {
		t.Fatal("the config image has no TLS keys")
	}
	for _, k := range keys {
		b, _ := os.ReadFile(k)
		n.secrets[filepath.Base(k)+" body"] = pemBody(t, b)
	}
	hash, err := os.ReadFile(filepath.Join(n.root, configimage.TLSDir, "kubeadmin-password.hash"))
	if err != nil {
		t.Fatal(err)
	}
	n.secrets["kubeadmin password hash"] = strings.TrimSpace(string(hash))

	// An EC private key in the service's env file, base64 on one line.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	n.secrets["EC private key body"] = pemBody(t, keyPEM)
	n.secrets["EC private key, base64"] = base64.StdEncoding.EncodeToString(keyPEM)
	appendFile(t, filepath.Join(n.root, onhost.AssistedServiceEnvPath), "EC_PRIVATE_KEY_PEM="+base64.StdEncoding.EncodeToString(keyPEM)+"\n")

	// An SSH private key in a user manifest, a Wi-Fi and 802.1X keyfile.
	n.secrets["ssh private key body"] = plantedSSHBody
	writeFile(t, filepath.Join(n.root, configimage.ExtraManifestsDir, "ssh-key-secret-0.yaml"),
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: ssh-key\n  namespace: openshift-config\nstringData:\n  ssh-privatekey: |\n"+
			"    -----BEGIN OPENSSH PRIVATE KEY-----\n    "+plantedSSHBody+"\n    -----END OPENSSH PRIVATE KEY-----\n  ssh-publickey: "+n.sshPub+"\n")
	n.secrets["wifi psk"] = plantedPSK
	n.secrets["802.1x password"] = planted8021x
	writeFile(t, filepath.Join(n.root, "etc/NetworkManager/system-connections/corp.nmconnection"),
		"[connection]\nid=corp\ntype=wifi\n\n[wifi-security]\nkey-mgmt=wpa-eap\npsk="+plantedPSK+"\n\n[802-1x]\neap=peap;\nidentity=alice\npassword="+planted8021x+"\n")
	writeFile(t, filepath.Join(n.root, "etc/hostname"), "master-0\n")

	// Logs that leak: a careless line of the agent, the sandbox's run.log.
	writeFile(t, filepath.Join(n.root, "var/log/agent.log"),
		"level=info msg=\"registering\" token="+n.secrets["agent token"]+"\n"+
			"level=debug msg=\"pull secret\" value="+pullSecret+"\n"+
			"level=debug msg=\"kubeadmin\" "+n.secrets["kubeadmin password"]+"\n")
	writeFile(t, filepath.Join(hostDir, "run.log"),
		"time=x level=INFO msg=\"service listening\" stage=service\n"+
			"Authorization: "+n.secrets["user token"]+"\nwatcher "+n.secrets["watcher token"]+" auth "+auth64+"\n")

	// Node zero's service on the root's data directory, kept running
	// while the test gathers.
	dataDir := filepath.Join(n.root, gather.DataDirPath)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	n.cluster = startGatherService(t, ctx, dataDir, pullSecret, n.secrets)
	return n
}

// startGatherService runs the service in-process on dataDir, registers a
// three-master cluster with the pull secret and three hosts whose checks
// pass, and stores the install file kubeadmin-password as the preparation
// does.
func startGatherService(t *testing.T, ctx context.Context, dataDir, pullSecret string, secrets map[string]string) string {
	t.Helper()
	st, err := store.Open(ctx, filepath.Join(dataDir, "nodezero.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := assisted.New(assisted.Config{Store: st, MonitorInterval: -1, MaxWait: time.Millisecond})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	key, err := auth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Service: svc, Verifier: auth.NewVerifier(&key.PublicKey, nil)}))
	t.Cleanup(func() {
		srv.Close()
		svc.Close()
		st.Close()
	})
	client := func(opt func(string) wire.ClientOption, s auth.Scheme) *wire.Client {
		tok, err := auth.Sign(key, s, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		secrets["service "+string(s)+" token"] = tok
		c, err := wire.NewClient(srv.URL, opt(tok), wire.WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	user, agent := client(wire.WithUserToken, auth.User), client(wire.WithAgentToken, auth.Agent)
	apiVIP, ingressVIP, err := simagent.VIPs(simagent.DefaultNetwork)
	if err != nil {
		t.Fatal(err)
	}
	cp := int64(3)
	c, err := user.RegisterCluster(ctx, wire.ClusterCreateParams{
		Name: "gather", OpenshiftVersion: "4.18", BaseDNSDomain: "example.com", PullSecret: pullSecret,
		ControlPlaneCount: &cp,
		APIVIPs:           []*wire.APIVIP{{IP: wire.IP(apiVIP.String())}},
		IngressVIPs:       []*wire.IngressVIP{{IP: wire.IP(ingressVIP.String())}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ie, err := user.RegisterInfraEnv(ctx, wire.InfraEnvCreateParams{Name: "gather", PullSecret: pullSecret, ClusterID: &c.ID})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		h, err := simagent.NewHost(i, simagent.DefaultNetwork, simagent.Master)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := agent.RegisterHost(ctx, ie.ID, wire.HostCreateParams{HostID: h.ID}); err != nil {
			t.Fatal(err)
		}
		if _, err := agent.NextSteps(ctx, ie.ID, h.ID, time.Now().Unix(), 0); err != nil {
			t.Fatal(err)
		}
		inv, err := json.Marshal(h.Inventory())
		if err != nil {
			t.Fatal(err)
		}
		if err := agent.PostStepReply(ctx, ie.ID, h.ID, wire.StepReply{StepType: wire.StepTypeInventory, StepID: "inventory-1", Output: string(inv)}); err != nil {
			t.Fatal(err)
		}
	}
	if c, err = user.GetCluster(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := assistedtest.AnswerChecks(ctx, user, agent, ie.ID, c); err != nil {
		t.Fatal(err)
	}
	err = st.Update(ctx, func(tx *store.Tx) error {
		return tx.PutClusterFile(c.ID, "kubeadmin-password", []byte(secrets["kubeadmin password"]))
	})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// pemBody returns the first base64 line of a PEM block: the key's bytes.
func pemBody(t *testing.T, b []byte) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "PRIVATE KEY") {
		t.Fatalf("not a PEM private key: %.40q", b)
	}
	return lines[1]
}

// TestGatherNodeZero gathers a node-zero root while its service runs: the
// bundle has the store dump with the hosts and their validations, the
// network section and the config, and no planted secret anywhere, while
// the redacted files keep their key names.
func TestGatherNodeZero(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n := newNodeZeroRoot(t, ctx)
	out := filepath.Join(t.TempDir(), "bundle.tar.gz")
	var stderr bytes.Buffer
	if err := run(ctx, []string{"gather", "--root", n.root, "-O", out}, io.Discard, &stderr); err != nil {
		t.Fatalf("gather: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("bundle mode %v, want 0600", fi.Mode().Perm())
	}
	top, files := gatherBundle(t, data)
	if !strings.HasPrefix(top, "agent-gather-master-0-") {
		t.Errorf("top directory %q, want agent-gather-master-0-TIME", top)
	}
	manifest := files["MANIFEST.txt"]
	if manifest == "" {
		t.Fatal("no MANIFEST.txt")
	}

	// The store: the cluster, its three hosts with validations parsed,
	// events, the install files by name.
	var hosts []struct {
		ClusterID string `json:"cluster_id"`
		Status    string
		Doc       struct {
			ValidationsInfo map[string][]struct{ ID, Status string } `json:"validations_info"`
			Inventory       struct{ Hostname string }
		}
	}
	if err := json.Unmarshal([]byte(files["store/hosts.json"]), &hosts); err != nil {
		t.Fatalf("store/hosts.json: %v\n%s", err, manifest)
	}
	if len(hosts) != 3 {
		t.Fatalf("store/hosts.json has %d hosts, want 3", len(hosts))
	}
	for _, h := range hosts {
		if h.ClusterID != n.cluster || h.Status != "known" || len(h.Doc.ValidationsInfo["hardware"]) == 0 || h.Doc.Inventory.Hostname == "" {
			t.Errorf("host %+v: want known in %s with validations_info and inventory parsed", h, n.cluster)
		}
	}
	for _, f := range []string{"store/clusters.json", "store/infra-envs.json", "store/events.json"} {
		if !strings.Contains(files[f], n.cluster) {
			t.Errorf("%s does not mention the cluster", f)
		}
	}
	if !strings.Contains(files["store/install-files.json"], `"name": "kubeadmin-password"`) {
		t.Errorf("store/install-files.json = %s", files["store/install-files.json"])
	}
	if !strings.Contains(files["store/summary.txt"], "cluster "+n.cluster+` "gather": ready`) {
		t.Errorf("store/summary.txt = %s", files["store/summary.txt"])
	}

	// Network, config, status and logs.
	for _, name := range []string{
		"network/ip-addr.txt", "network/ip-route.txt", "network/ip-6-route.txt", "network/ip-rule.txt",
		"network/nmcli-device.txt", "network/hostname.txt", "network/etc/NetworkManager/system-connections/corp.nmconnection",
		"config/etc/assisted/rendezvous-host.env", "config/etc/assisted/manifests/cluster-image-set.yaml",
		"config/etc/assisted/manifests/agent-config.yaml", "config/etc/assisted/manifests/pull-secret.yaml",
		"config/usr/local/share/assisted-service/assisted-service.env", "config/usr/local/share/start-cluster/start-cluster.env",
		"config/root/.docker/config.json", "config/opt/agent/tls/kubeadmin-password.hash", "config/etc/hostname",
		"status/data-dir.txt", "logs/var/log/agent.log", "logs/run.log",
	} {
		if _, ok := files[name]; !ok {
			t.Errorf("%s is not in the bundle", name)
		}
	}
	if !strings.Contains(manifest, "skipped   logs/journal-nodezero.log") {
		t.Error("the manifest does not say why there is no journal")
	}

	// No secret anywhere; the redacted files keep their keys.
	for name, content := range files {
		if strings.Contains(content, "PRIVATE KEY") {
			t.Errorf("%s holds a PRIVATE KEY header", name)
		}
		for what, v := range n.secrets {
			if strings.Contains(content, v) {
				t.Errorf("%s holds the %s", name, what)
			}
		}
	}
	for name, want := range map[string][]string{
		"config/etc/assisted/rendezvous-host.env":                         {"PULL_SECRET_TOKEN=<redacted>", "USER_AUTH_TOKEN=<redacted>", "NODE_ZERO_IP=192.168.111.80"},
		"config/usr/local/share/assisted-service/assisted-service.env":    {"USER_AUTH_TOKEN=<redacted>", "WATCHER_AUTH_TOKEN=<redacted>", "EC_PRIVATE_KEY_PEM=<redacted>", "EC_PUBLIC_KEY_PEM=LS0t"},
		"config/root/.docker/config.json":                                 {`"auth": "<redacted>"`, `"email": "gather@example.com"`},
		"config/etc/assisted/manifests/pull-secret.yaml":                  {".dockerconfigjson: |-", `"auth": "<redacted>",`, `"email": "gather@example.com"`},
		"config/etc/assisted/extra-manifests/ssh-key-secret-0.yaml":       {"ssh-privatekey: |", "<redacted>", "ssh-publickey: " + n.sshPub},
		"network/etc/NetworkManager/system-connections/corp.nmconnection": {"psk=<redacted>", "password=<redacted>", "identity=alice"},
		"store/clusters.json":                                             {`"pull_secret": "{\"auths\":{\"registry.example.com:5000\":{\"auth\":\"<redacted>\"`},
		"logs/var/log/agent.log":                                          {"token=<redacted>"},
	} {
		for _, w := range want {
			if !strings.Contains(files[name], w) {
				t.Errorf("%s does not contain %q:\n%s", name, w, files[name])
			}
		}
	}
	if !strings.Contains(files["config/etc/assisted/manifests/infraenv.yaml"]+files["store/infra-envs.json"], strings.Fields(n.sshPub)[1]) {
		t.Error("the SSH public key was redacted: it may stay")
	}
}

// TestGatherWithoutToolsOrConfig gathers an empty root on a PATH without
// ip, nmcli or journalctl, to stdout: a bundle, whose manifest says what
// was missing; and the default file name in the working directory. Only a
// bundle that cannot be written fails.
func TestGatherWithoutToolsOrConfig(t *testing.T) {
	ctx := context.Background()
	t.Setenv("PATH", t.TempDir())
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "etc/hostname"), "worker-1\n")
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"gather", "--root", root, "-O", "-"}, &stdout, &stderr); err != nil {
		t.Fatalf("gather: %v", err)
	}
	_, files := gatherBundle(t, stdout.Bytes())
	m := files["MANIFEST.txt"]
	for _, want := range []string{
		"not found network/ip-addr.txt (ip is not installed)",
		"not found network/nmcli-general.txt (nmcli is not installed)",
		"missing   config/etc/assisted/",
		"missing   config/root/.docker/config.json",
		"skipped   store/ (no " + filepath.Join(root, gather.DataDirPath, "nodezero.db"),
		"ok        config/etc/hostname",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("the manifest has no line %q:\n%s", want, m)
		}
	}
	if !strings.Contains(files["network/ip-addr.txt"], "ip: not found") {
		t.Errorf("network/ip-addr.txt = %q", files["network/ip-addr.txt"])
	}
	if !strings.Contains(stderr.String(), "not found") {
		t.Errorf("stderr = %q, want the summary", stderr.String())
	}

	t.Chdir(t.TempDir())
	if err := run(ctx, []string{"gather", "--root", root}, io.Discard, io.Discard); err != nil {
		t.Fatalf("gather: %v", err)
	}
	names, _ := filepath.Glob("agent-gather-worker-1-*.tar.gz")
	if len(names) != 1 {
		t.Errorf("default output: %v, want one agent-gather-worker-1-TIME.tar.gz", names)
	}
	if err := run(ctx, []string{"gather", "--root", root, "-O", filepath.Join(t.TempDir(), "no", "such", "dir", "b.tar.gz")}, io.Discard, io.Discard); err == nil {
		t.Error("gather into a missing directory: no error")
	}
}
