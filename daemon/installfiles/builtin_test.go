package installfiles

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

func TestGenerateBuiltIn(t *testing.T) {
	tests := []struct {
		name             string
		in               func() Input
		masters, workers int
		platform         string
	}{
		{"3+2", func() Input { return testInput(3, 2) }, 3, 2, "baremetal"},
		{"compact 3", func() Input { return testInput(3, 0) }, 3, 0, "baremetal"},
		{"single node", snoInput, 1, 0, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in()
			in.Manifests = []Manifest{
				{Folder: "manifests", FileName: "50-chrony.yaml", Content: []byte("kind: MachineConfig\n")},
				{Folder: "openshift", FileName: "99-extra.yml", Content: []byte("kind: ConfigMap\n")},
			}
			files, err := Generate(context.Background(), in)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if files.Generator != GeneratorBuiltIn {
				t.Errorf("Generator = %q, want %q", files.Generator, GeneratorBuiltIn)
			}
			wantNames := []string{FileBootstrap, FileInstallConfig, FileKubeadminPassword, FileKubeconfig, FileMaster, FileMetadata, FileWorker}
			if got := slices.Sorted(maps.Keys(files.Cluster)); !slices.Equal(got, wantNames) {
				t.Errorf("cluster files = %v, want %v", got, wantNames)
			}

			ic := parseYAML(t, files.Cluster[FileInstallConfig])
			if got := ic["controlPlane"].(map[string]any)["replicas"]; got != tt.masters {
				t.Errorf("controlPlane.replicas = %v, want %d", got, tt.masters)
			}
			if got := ic["compute"].([]any)[0].(map[string]any)["replicas"]; got != tt.workers {
				t.Errorf("compute[0].replicas = %v, want %d", got, tt.workers)
			}
			if _, ok := ic["platform"].(map[string]any)[tt.platform]; !ok {
				t.Errorf("platform = %v, want %s", ic["platform"], tt.platform)
			}

			for _, role := range []string{"bootstrap", "master", "worker"} {
				name := role + ".ign"
				if v := ignVersion(t, files.Cluster[name]); v != "3.4.0" {
					t.Errorf("%s version = %q, want 3.4.0", name, v)
				}
				cfg := parseIgn(t, name, files.Cluster[name])
				fs := filesOf(t, cfg)
				if got := fs[pathRole].content; got != role+"\n" {
					t.Errorf("%s %s = %q, want %q", name, pathRole, got, role)
				}
				if got := fs[pathPullSecret]; got != (ignFileView{testPullSecret, 0o600}) {
					t.Errorf("%s pull secret = %+v, want the secret with mode 0600", name, got)
				}
				if _, ok := fs[pathTrustBundle]; ok {
					t.Errorf("%s has a trust bundle, none was given", name)
				}
				if len(cfg.Passwd.Users) != 1 || cfg.Passwd.Users[0].Name != "core" || len(cfg.Passwd.Users[0].SSHAuthorizedKeys) != 2 {
					t.Errorf("%s users = %+v, want core with both keys", name, cfg.Passwd.Users)
				}
				var opt []string
				for p := range fs {
					if strings.HasPrefix(p, "/opt/openshift/") {
						opt = append(opt, p)
					}
				}
				slices.Sort(opt)
				var wantOpt []string
				if role == "bootstrap" {
					wantOpt = []string{
						"/opt/openshift/auth/kubeconfig",
						"/opt/openshift/install-config.yaml",
						"/opt/openshift/manifests/50-chrony.yaml",
						"/opt/openshift/openshift/99-extra.yml",
						"/opt/openshift/openshift/99_kubeadmin-password-secret.yaml",
						"/opt/openshift/tls/admin-kubeconfig-ca-bundle.crt",
						"/opt/openshift/tls/kube-apiserver-lb-signer.crt",
						"/opt/openshift/tls/kube-apiserver-lb-signer.key",
						"/opt/openshift/tls/kube-apiserver-localhost-signer.crt",
						"/opt/openshift/tls/kube-apiserver-localhost-signer.key",
						"/opt/openshift/tls/kube-apiserver-service-network-signer.crt",
						"/opt/openshift/tls/kube-apiserver-service-network-signer.key",
					}
					if got := fs["/opt/openshift/install-config.yaml"]; got.content != string(files.Cluster[FileInstallConfig]) || got.mode != 0o600 {
						t.Errorf("bootstrap install-config = %+v, want the cluster's, mode 0600", got)
					}
					if got := fs["/opt/openshift/manifests/50-chrony.yaml"].content; got != "kind: MachineConfig\n" {
						t.Errorf("user manifest = %q", got)
					}
				}
				if d := cmp.Diff(wantOpt, opt); d != "" {
					t.Errorf("%s /opt/openshift files (-want +got):\n%s", name, d)
				}
			}

			if len(files.Hosts) != len(in.Hosts) {
				t.Errorf("%d host configs, want %d", len(files.Hosts), len(in.Hosts))
			}
			for i, h := range in.Hosts {
				b, ok := files.Hosts[h.ID]
				if !ok {
					t.Errorf("no config for host %s", h.ID)
					continue
				}
				fs := filesOf(t, parseIgn(t, h.ID, b))
				wantRole := string(h.Role) // the bootstrap host gets master's
				if got := fs[pathRole].content; got != wantRole+"\n" {
					t.Errorf("host %d role file = %q, want %q", i, got, wantRole)
				}
				if got := fs["/etc/hostname"].content; got != h.RequestedHostname+"\n" {
					t.Errorf("host %d hostname = %q, want %q", i, got, h.RequestedHostname)
				}
				if got := fs["/etc/nodezero/host-id"].content; got != h.ID+"\n" {
					t.Errorf("host %d host-id = %q, want %q", i, got, h.ID)
				}
				if _, ok := fs[pathPullSecret]; !ok {
					t.Errorf("host %d config is not whole: no pull secret", i)
				}
				if _, ok := fs["/opt/openshift/install-config.yaml"]; ok {
					t.Errorf("host %d config carries the bootstrap files", i)
				}
			}
		})
	}
}

// TestGenerateCredentials: the shapes of what the built-in generator makes
// (the identity of the credentials with the config image's is
// credentials_test.go's).
func TestGenerateCredentials(t *testing.T) {
	in := testInput(3, 2)
	in.TLSDir = "" // the password minted here
	files, err := Generate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := filesOf(t, parseIgn(t, FileBootstrap, files.Cluster[FileBootstrap]))

	password := string(files.Cluster[FileKubeadminPassword])
	group := "[a-km-zA-NP-Z2-9]{5}" // openshift-install's alphabet: no l, O, 0, 1
	if !regexp.MustCompile("^"+group+"(-"+group+"){3}$").MatchString(password) || len(password) != 23 {
		t.Errorf("kubeadmin password %q is not openshift's 5-5-5-5 form", password)
	}

	var meta map[string]string
	if err := json.Unmarshal(files.Cluster[FileMetadata], &meta); err != nil {
		t.Fatal(err)
	}
	if meta["clusterName"] != "edge" ||
		!regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(meta["clusterID"]) ||
		!regexp.MustCompile(`^edge-[a-z]{5}$`).MatchString(meta["infraID"]) {
		t.Errorf("metadata.json = %v, want clusterName edge, a v4 UUID, infraID edge-xxxxx", meta)
	}

	kc := parseYAML(t, files.Cluster[FileKubeconfig])
	cluster := kc["clusters"].([]any)[0].(map[string]any)
	user := kc["users"].([]any)[0].(map[string]any)
	ctx := kc["contexts"].([]any)[0].(map[string]any)
	if cluster["name"] != "edge" || user["name"] != "admin" || ctx["name"] != "admin" || kc["current-context"] != "admin" {
		t.Errorf("kubeconfig names: cluster %v, user %v, context %v, current %v", cluster["name"], user["name"], ctx["name"], kc["current-context"])
	}
	if got := cluster["cluster"].(map[string]any)["server"]; got != "https://api.edge.example.com:6443" {
		t.Errorf("server = %v", got)
	}
	if got := string(files.Cluster[FileKubeconfig]); got != bootstrap["/opt/openshift/auth/kubeconfig"].content {
		t.Error("bootstrap's auth/kubeconfig differs from kubeconfig-noingress")
	}

	data := func(m map[string]any, key string) []byte {
		b, err := base64.StdEncoding.DecodeString(m[key].(string))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	u := user["user"].(map[string]any)
	client := parseCert(t, data(u, "client-certificate-data"))
	if client.Subject.CommonName != "system:admin" || !slices.Equal(client.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("client subject = %v, want system:admin in system:masters", client.Subject)
	}
	if !client.NotAfter.After(testNow.Add(9 * 365 * 24 * time.Hour)) {
		t.Errorf("client certificate expires %v, want about ten years", client.NotAfter)
	}
	if _, err := x509.ParsePKCS1PrivateKey(pemBlock(t, data(u, "client-key-data"))); err != nil {
		t.Errorf("client key is not openshift-install's RSA: %v", err)
	}
	for _, n := range []string{"kube-apiserver-lb-signer", "kube-apiserver-localhost-signer", "kube-apiserver-service-network-signer"} {
		if got := bootstrap["/opt/openshift/tls/"+n+".key"]; got.mode != 0o600 {
			t.Errorf("%s key mode = %o, want 0600", n, got.mode)
		}
		if c := parseCert(t, []byte(bootstrap["/opt/openshift/tls/"+n+".crt"].content)); c.Subject.CommonName != n || !c.IsCA {
			t.Errorf("%s.crt = %v (CA %v), want the %s CA", n, c.Subject, c.IsCA, n)
		}
	}
}

func parseCert(t *testing.T, p []byte) *x509.Certificate {
	t.Helper()
	c, err := x509.ParseCertificate(pemBlock(t, p))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pemBlock(t *testing.T, p []byte) []byte {
	t.Helper()
	blk, _ := pem.Decode(p)
	if blk == nil {
		t.Fatalf("no PEM in %q", p)
	}
	return blk.Bytes
}

func TestGenerateDeterministicIdentity(t *testing.T) {
	identity := func(seed byte) [3]string {
		in := testInput(3, 0)
		in.Rand, in.TLSDir = seeded(seed), "" // the password minted too
		files, err := Generate(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		var meta map[string]string
		if err := json.Unmarshal(files.Cluster[FileMetadata], &meta); err != nil {
			t.Fatal(err)
		}
		return [3]string{string(files.Cluster[FileKubeadminPassword]), meta["clusterID"], meta["infraID"]}
	}
	a, b, c := identity(7), identity(7), identity(8)
	if a != b {
		t.Errorf("same Rand gave %v then %v", a, b)
	}
	for i := range a {
		if a[i] == c[i] {
			t.Errorf("different Rand gave the same %q", a[i])
		}
	}
}

func TestGenerateTrustBundleAndArbiter(t *testing.T) {
	in := testInput(2, 1)
	in.Hosts = append(in.Hosts, testHost(3, wire.HostRoleArbiter))
	in.AdditionalTrustBundle = testBundle
	files, err := Generate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileBootstrap, FileMaster, FileWorker, FileArbiter} {
		fs := filesOf(t, parseIgn(t, name, files.Cluster[name]))
		if got := fs[pathTrustBundle].content; got != testBundle {
			t.Errorf("%s trust bundle = %q, want %q", name, got, testBundle)
		}
	}
	arbiter := in.Hosts[3].ID
	if got := filesOf(t, parseIgn(t, arbiter, files.Hosts[arbiter]))[pathRole].content; got != "arbiter\n" {
		t.Errorf("arbiter host role = %q, want arbiter", got)
	}
}

func TestGenerateHostnameFromInventory(t *testing.T) {
	in := testInput(3, 0)
	in.Hosts[2].RequestedHostname = ""
	files, err := Generate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	id := in.Hosts[2].ID
	if got := filesOf(t, parseIgn(t, id, files.Hosts[id]))["/etc/hostname"].content; got != "inv-2\n" {
		t.Errorf("hostname = %q, want the inventory's inv-2", got)
	}
}

func TestGenerateRejects(t *testing.T) {
	tests := []struct {
		name string
		edit func(in *Input)
		want []string
	}{
		{"host without a hostname", func(in *Input) {
			in.Hosts[1].RequestedHostname, in.Hosts[1].Inventory = "", `{"interfaces":[{"mac_address":"m","ipv4_addresses":["192.168.111.9/24"]}]}`
		}, []string{"hosts[00000000-0000-0000-0000-000000000001].hostname"}},
		{"hostname with a newline", func(in *Input) { in.Hosts[1].RequestedHostname = "a\nb" }, []string{"hosts[00000000-0000-0000-0000-000000000001].hostname"}},
		{"inventory not JSON", func(in *Input) { in.Cluster.Platform.Type = wire.PlatformTypeNone; in.Hosts[0].Inventory = "{" }, []string{"hosts[00000000-0000-0000-0000-000000000000].inventory"}},
		{"manifest outside its folder", func(in *Input) {
			in.Manifests = []Manifest{{Folder: "manifests", FileName: "../../etc/passwd"}, {Folder: "etc", FileName: "a.yaml"}}
		}, []string{"manifests[manifests/../../etc/passwd]", "manifests[etc/a.yaml]"}},
		{"manifest twice", func(in *Input) {
			in.Manifests = []Manifest{{Folder: "manifests", FileName: "a.yaml"}, {Folder: "manifests", FileName: "a.yaml"}}
		}, []string{"manifests[manifests/a.yaml]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInput(3, 1)
			tt.edit(&in)
			files, err := Generate(context.Background(), in)
			if err == nil {
				t.Fatalf("Generate made %d files, want an error", len(files.Cluster))
			}
			if d := cmp.Diff(tt.want, inputFields(err)); d != "" {
				t.Errorf("fields of %q (-want +got):\n%s", err, d)
			}
		})
	}
	if _, err := Generate(context.Background(), Input{}); err == nil {
		t.Error("Generate without a cluster succeeded")
	}
}

// TestCheckConfigsNamesTheFile: a bad config is reported by its download
// name, a host's as the service stores it.
func TestCheckConfigsNamesTheFile(t *testing.T) {
	good, bad := []byte(`{"ignition":{"version":"3.4.0"}}`), []byte(`{"ignition":{"version":"2.2.0"}}`)
	tests := []struct {
		name    string
		configs map[string][]byte
		nameOf  func(string) string
		want    []string
	}{
		{"cluster", map[string][]byte{FileMaster: good, FileWorker: bad, FileBootstrap: bad, FileMetadata: bad},
			func(s string) string { return s }, []string{FileBootstrap, FileWorker}},
		{"hosts", map[string][]byte{"h1": bad, "h2": good}, hostFileName, []string{"hosts/h1.ign"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkConfigs(tt.configs, tt.nameOf)
			if err == nil {
				t.Fatal("checkConfigs = nil, want errors")
			}
			var names []string
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				var ce *CheckError
				if errors.As(e, &ce) {
					names = append(names, ce.File)
				}
			}
			if d := cmp.Diff(tt.want, names); d != "" {
				t.Errorf("files named (-want +got):\n%s", d)
			}
		})
	}
}
