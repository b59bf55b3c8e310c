package gather

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fake secrets of the shapes the redactor looks for.
const (
	fakeKey = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIGZha2VrZXlmYWtla2V5ZmFrZWtleWZha2VrZXlmYWtlazCgCgYIKoZI\nzj0DAQehRANCAAR=\n-----END EC PRIVATE KEY-----"
	fakeJWT = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJhdXRoX3NjaGVtZSI6InVzZXJBdXRoIn0.c2lnbmF0dXJlc2lnbmF0dXJl"
)

func TestSecretName(t *testing.T) {
	secret := []string{
		"USER_AUTH_TOKEN", "AGENT_AUTH_TOKEN", "WATCHER_AUTH_TOKEN", "PULL_SECRET_TOKEN", "EC_PRIVATE_KEY_PEM",
		"auth", "password", "psk", "wep-key0", "private-key-password", "private-key", "preshared-key", "mka-cak",
		"pin", "DB_PASS", "kubeadmin-password", "kubeadmin-password.hash", "pull_secret", "pullSecret", "agentAuth",
		"Authorization", "X-Secret-Key", "client_secret", "ssh_private_key", "bmcPassword",
	}
	plain := []string{
		"EC_PUBLIC_KEY_PEM", "sshKey", "ssh_public_key", "ssh_authorized_key", "pullSecretRef", "secretName",
		"pull_secret_set", "psk-flags", "password-flags", "AUTH_TYPE", "AUTH_TOKEN_EXPIRY", "auths", "name",
		"NODE_ZERO_IP", "SERVICE_BASE_URL", "tokenFile", "pull-secret.yaml", "bypass", "email", "key", "id", "mac_addresses", "",
	}
	for _, k := range secret {
		if !SecretName(k) {
			t.Errorf("SecretName(%q) = false, want true", k)
		}
	}
	for _, k := range plain {
		if SecretName(k) {
			t.Errorf("SecretName(%q) = true, want false", k)
		}
	}
}

func TestEnv(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		n              int
	}{
		{"rendezvous-host.env",
			"NODE_ZERO_IP=192.168.111.80\nSERVICE_BASE_URL=http://192.168.111.80:8090/\nPULL_SECRET_TOKEN=" + fakeJWT + "\nUSER_AUTH_TOKEN=" + fakeJWT + "\nWORKFLOW_TYPE=install\n",
			"NODE_ZERO_IP=192.168.111.80\nSERVICE_BASE_URL=http://192.168.111.80:8090/\nPULL_SECRET_TOKEN=<redacted>\nUSER_AUTH_TOKEN=<redacted>\nWORKFLOW_TYPE=install\n",
			2},
		{"quoted and exported", "export DB_PASS=\"admin\"\n# USER_AUTH_TOKEN=comment\n", "export DB_PASS=<redacted>\n# USER_AUTH_TOKEN=comment\n", 1},
		{"empty value stays", "NTP_DEFAULT_SERVER=\nWATCHER_AUTH_TOKEN=\n", "NTP_DEFAULT_SERVER=\nWATCHER_AUTH_TOKEN=\n", 0},
		{"base64 private key", "EC_PRIVATE_KEY_PEM=" + base64.StdEncoding.EncodeToString([]byte(fakeKey)) + "\nEC_PUBLIC_KEY_PEM=LS0tLS1CRUdJTiBQVUJMSUMgS0VZLS0tLS0K\n",
			"EC_PRIVATE_KEY_PEM=<redacted>\nEC_PUBLIC_KEY_PEM=LS0tLS1CRUdJTiBQVUJMSUMgS0VZLS0tLS0K\n", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, n := NewRedactor().Env([]byte(tt.in))
			if diff := cmp.Diff(tt.want, string(got)); diff != "" || n != tt.n {
				t.Errorf("Env(%q) = %q, %d redacted; want %d (-want +got):\n%s", tt.in, got, n, tt.n, diff)
			}
		})
	}
}

func TestKeyfile(t *testing.T) {
	in := `[connection]
id=corp-wifi
type=wifi

[wifi-security]
key-mgmt=wpa-psk
psk=correct horse battery staple
psk-flags=0

[802-1x]
eap=peap;
identity=alice
password=s3cret-8021x-password
private-key-password = keypass123
ca-cert=/etc/pki/ca.pem

[vpn-secrets]
IPSec secret=ipsec-shared-secret
`
	want := `[connection]
id=corp-wifi
type=wifi

[wifi-security]
key-mgmt=wpa-psk
psk=<redacted>
psk-flags=0

[802-1x]
eap=peap;
identity=alice
password=<redacted>
private-key-password = <redacted>
ca-cert=/etc/pki/ca.pem

[vpn-secrets]
IPSec secret=<redacted>
`
	got, n := NewRedactor().Keyfile([]byte(in))
	if diff := cmp.Diff(want, string(got)); diff != "" || n != 4 {
		t.Errorf("Keyfile: %d redacted, want 4 (-want +got):\n%s", n, diff)
	}
}

func TestYAML(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		n              int
	}{
		{"pull secret manifest",
			"apiVersion: v1\nkind: Secret\nmetadata:\n  name: pull-secret\nstringData:\n  .dockerconfigjson: '{\"auths\":{\"quay.io\":{\"auth\":\"dXNlcjpwYXNzd29yZA==\"}}}'\n",
			// The manifest's key is not a secret name; Text's JSON rule
			// takes the auth (see TestText).
			"apiVersion: v1\nkind: Secret\nmetadata:\n  name: pull-secret\nstringData:\n  .dockerconfigjson: '{\"auths\":{\"quay.io\":{\"auth\":\"dXNlcjpwYXNzd29yZA==\"}}}'\n",
			0},
		{"scalars", "platform:\n  vsphere:\n    password: \"hunter2-long\"  \n    username: admin\n    token: abc # a comment\n",
			"platform:\n  vsphere:\n    password: \"<redacted>\"  \n    username: admin\n    token: <redacted>\n", 2},
		{"references stay", "spec:\n  pullSecretRef:\n    name: pull-secret\n  secretName: bmc\n", "spec:\n  pullSecretRef:\n    name: pull-secret\n  secretName: bmc\n", 0},
		{"block scalar", "stringData:\n  ssh-privatekey: |\n    " + strings.ReplaceAll(fakeKey, "\n", "\n    ") + "\n  known_hosts: x\n",
			"stringData:\n  ssh-privatekey: |\n    <redacted>\n  known_hosts: x\n", 1},
		{"sequence item", "hosts:\n- name: a\n  bmcPassword: 'it''s-a-secret'\n- password: p4ssw0rd-xyz\n",
			"hosts:\n- name: a\n  bmcPassword: '<redacted>'\n- password: <redacted>\n", 2},
		{"JSON written as YAML", "{\n  \"password\": \"p4ss\\\"word\",\n  \"user\": \"u\"\n}\n", "{\n  \"password\": \"<redacted>\",\n  \"user\": \"u\"\n}\n", 1},
		{"another key's block is left to Text", "stringData:\n  .dockerconfigjson: |-\n    {\n      \"auths\": {\"q\": {\n        \"auth\": \"dXNlcjpwYXNzd29yZA==\",\n        \"password\": x\n      }}\n    }\nnext: 1\n",
			"stringData:\n  .dockerconfigjson: |-\n    {\n      \"auths\": {\"q\": {\n        \"auth\": \"dXNlcjpwYXNzd29yZA==\",\n        \"password\": x\n      }}\n    }\nnext: 1\n", 0},
		{"JSON in a secret key", "pullSecret: '{\"auths\":{\"quay.io\":{\"auth\":\"dXNlcjpwYXNzd29yZA==\",\"email\":\"a@b.c\"}}}'\nsshKey: ssh-ed25519 AAAAC3 core@x\n",
			"pullSecret: '{\"auths\":{\"quay.io\":{\"auth\":\"<redacted>\",\"email\":\"a@b.c\"}}}'\nsshKey: ssh-ed25519 AAAAC3 core@x\n", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, n := NewRedactor().YAML([]byte(tt.in))
			if diff := cmp.Diff(tt.want, string(got)); diff != "" || n != tt.n {
				t.Errorf("YAML: %d redacted, want %d (-want +got):\n%s", n, tt.n, diff)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		n              int
	}{
		{"pull secret file", `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNzd29yZA==","email":"a@b.c"},"r.io":{"auth":"b3RoZXI6c2VjcmV0cGFzcw=="}}}`,
			"{\n  \"auths\": {\n    \"quay.io\": {\n      \"auth\": \"<redacted>\",\n      \"email\": \"a@b.c\"\n    },\n    \"r.io\": {\n      \"auth\": \"<redacted>\"\n    }\n  }\n}\n", 2},
		{"store document: pull_secret is JSON in a string, order kept",
			`{"cluster":{"name":"ocp","pull_secret_set":true,"ssh_public_key":"ssh-ed25519 AAAA"},"pull_secret":"{\"auths\":{\"q\":{\"auth\":\"dXNlcjpwYXNzd29yZA==\"}}}"}`,
			"{\n  \"cluster\": {\n    \"name\": \"ocp\",\n    \"pull_secret_set\": true,\n    \"ssh_public_key\": \"ssh-ed25519 AAAA\"\n  },\n  \"pull_secret\": \"{\\\"auths\\\":{\\\"q\\\":{\\\"auth\\\":\\\"<redacted>\\\"}}}\"\n}\n", 1},
		{"secret string that is not JSON", `{"kubeadmin_password":"abcde-fghij-klmno-pqrst","n":1}`,
			"{\n  \"kubeadmin_password\": \"<redacted>\",\n  \"n\": 1\n}\n", 1},
		{"secret object without secret keys", `{"tokens":{"agent":"x1","user":["y1","y2"]},"pin":1234}`,
			"{\n  \"tokens\": {\n    \"agent\": \"<redacted>\",\n    \"user\": [\n      \"<redacted>\",\n      \"<redacted>\"\n    ]\n  },\n  \"pin\": \"<redacted>\"\n}\n", 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, n, err := NewRedactor().JSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" || n != tt.n {
				t.Errorf("JSON: %d redacted, want %d (-want +got):\n%s", n, tt.n, diff)
			}
		})
	}
	if _, _, err := NewRedactor().JSON([]byte(`{"a":1} trailing`)); err == nil {
		t.Error("JSON with trailing data: no error")
	}
}

func TestText(t *testing.T) {
	escaped := strings.ReplaceAll(fakeKey, "\n", `\n`)
	for _, tt := range []struct {
		name, in, want string
	}{
		{"PEM block", "key:\n" + fakeKey + "\nafter\n", "key:\n<redacted private key>\nafter\n"},
		{"PEM in a JSON string", `{"key":"` + escaped + `"}`, `{"key":"<redacted private key>"}`},
		{"PEM cut off", "tail\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n\nnext line\n", "tail\n<redacted private key>\n\nnext line\n"},
		{"base64 PEM", "X " + base64.StdEncoding.EncodeToString([]byte(fakeKey)) + " Y", "X <redacted> Y"},
		{"base64 certificate stays", "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJ", "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJ"},
		{"JWT", `level=INFO msg="agent" header="` + fakeJWT + `"`, `level=INFO msg="agent" header="<redacted>"`},
		{"URL password", "HTTPS_PROXY=http://user:pr0xy-pass@proxy.example.com:3128/ NO_PROXY=.example.com", "HTTPS_PROXY=http://user:<redacted>@proxy.example.com:3128/ NO_PROXY=.example.com"},
		{"JSON pair", `{"auths":{"q":{"auth":"dXNlcjpwYXNzd29yZA=="}}}`, `{"auths":{"q":{"auth":"<redacted>"}}}`},
		{"escaped JSON pair", `"{\"auths\":{\"q\":{\"auth\":\"dXNlcjpwYXNzd29yZA==\"}}}"`, `"{\"auths\":{\"q\":{\"auth\":\"<redacted>\"}}}"`},
		{"log pairs", "time=x level=WARN msg=retry password=hunter2 token=abc authorization: Bearer abc.def count=3",
			"time=x level=WARN msg=retry password=<redacted> token=<redacted> authorization: <redacted> count=3"},
		{"plain text stays", "the password is checked; ssh-ed25519 AAAA core@x; pull_secret_set=true", "the password is checked; ssh-ed25519 AAAA core@x; pull_secret_set=true"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := NewRedactor().Text([]byte(tt.in))
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Text(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestLearned: a value redacted by name in one file is redacted from any
// other text, its base64 user:password form decoded too.
func TestLearned(t *testing.T) {
	r := NewRedactor()
	r.Env([]byte("USER_AUTH_TOKEN=opaque-token-0123456789\n"))
	r.JSON([]byte(`{"auths":{"q":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("robot:pa55w0rd-long")) + `"}}}`))
	r.Learn("short")
	got, n := r.Text([]byte("sent opaque-token-0123456789 as robot:pa55w0rd-long; pa55w0rd-long again; short stays"))
	want := "sent <redacted> as <redacted>; <redacted> again; short stays"
	if string(got) != want || n != 3 {
		t.Errorf("Text = %q, %d; want %q, 3", got, n, want)
	}
}

func TestFormatOf(t *testing.T) {
	for name, want := range map[string]format{
		"config/root/.docker/config.json":                              formatJSON,
		"config/etc/assisted/manifests/pull-secret.yaml":               formatYAML,
		"config/etc/assisted/rendezvous-host.env":                      formatEnv,
		"config/etc/assisted/node0":                                    formatEnv,
		"config/opt/agent/tls/kubeadmin-password.hash":                 formatSecret,
		"config/opt/agent/tls/kubeadmin-password":                      formatSecret,
		"config/opt/agent/tls/admin-kubeconfig-signer.key":             formatText,
		"network/etc/NetworkManager/system-connections/a.nmconnection": formatKeyfile,
		"config/etc/containers/registries.conf":                        formatKeyfile,
		"status/var/lib/nodezero/auth/user.token":                      formatSecret,
	} {
		if got := formatOf(name); got != want {
			t.Errorf("formatOf(%q) = %v, want %v", name, got, want)
		}
	}
}
