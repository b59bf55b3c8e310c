package onhost

import (
	"encoding/base64"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRendezvousEnv(t *testing.T) {
	for _, tc := range []struct {
		name, ip, service, ui string
	}{
		{"ipv4", "192.168.111.80", "http://192.168.111.80:8090/", "http://192.168.111.80:3001/"},
		{"ipv6 in brackets", "fd2e:6f44:5dd8::50", "http://[fd2e:6f44:5dd8::50]:8090/", "http://[fd2e:6f44:5dd8::50]:3001/"},
		{"canonical form", "fd2e:6f44:5dd8:0000::0050", "http://[fd2e:6f44:5dd8::50]:8090/", "http://[fd2e:6f44:5dd8::50]:3001/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnv("rendezvous-host.env", RendezvousEnv(netip.MustParseAddr(tc.ip), "AGENT", "USER", WorkflowInstall))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"NODE_ZERO_IP": netip.MustParseAddr(tc.ip).String(), "SERVICE_BASE_URL": tc.service,
				"IMAGE_SERVICE_BASE_URL": strings.Replace(tc.service, "8090", "8888", 1),
				"PULL_SECRET_TOKEN":      "AGENT", "USER_AUTH_TOKEN": "USER", "WORKFLOW_TYPE": "install",
				"AIUI_APP_API_URL": tc.service, "AIUI_URL": tc.ui,
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("rendezvous-host.env (-want +got):\n%s", d)
			}
		})
	}
}

func TestAssistedServiceEnv(t *testing.T) {
	pem := []byte("-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----\n")
	env, err := ParseEnv("assisted-service.env", AssistedServiceEnv(ServiceEnv{InfraEnvID: "ie", PublicKeyPEM: pem, UserToken: "U", WatcherToken: "W"}))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := base64.StdEncoding.DecodeString(env["EC_PUBLIC_KEY_PEM"])
	if err != nil || string(dec) != string(pem) {
		t.Errorf("EC_PUBLIC_KEY_PEM = %q (%v), want base64 of the PEM on one line", env["EC_PUBLIC_KEY_PEM"], err)
	}
	for k, want := range map[string]string{"AUTH_TYPE": "agent-installer-local", "INFRA_ENV_ID": "ie", "USER_AUTH_TOKEN": "U", "WATCHER_AUTH_TOKEN": "W", "HOST_STAGE_WAITING_FOR_CONTROL_PLANE_TIMEOUT": "90m", "NTP_DEFAULT_SERVER": ""} {
		if got, ok := env[k]; !ok || got != want {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, want)
		}
	}
	if got := string(StartClusterEnv(3, 2)); got != "REQUIRED_MASTER_NODES=3\nREQUIRED_WORKER_NODES=2\n" {
		t.Errorf("start-cluster.env = %q", got)
	}
}

func TestParseEnvErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"A=1\nnot a pair\n", "x.env:2: want KEY=VALUE"},
		{"A=1\n# c\nA=2\n", "x.env:3: A is set twice"},
		{"=v\n", "x.env:1: want KEY=VALUE"},
	} {
		_, err := ParseEnv("x.env", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseEnv(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
	got, err := ParseEnv("x.env", []byte("\n# comment\nK=a=b\n"))
	if err != nil || got["K"] != "a=b" || len(got) != 1 {
		t.Errorf("ParseEnv = %v, %v", got, err)
	}
}

func TestParseRendezvousRoundTrip(t *testing.T) {
	ip := netip.MustParseAddr("fd00::20")
	got, err := ParseRendezvous("rv", RendezvousEnvHTTPS(ip, "agent", "user", WorkflowInstall))
	if err != nil {
		t.Fatal(err)
	}
	want := Rendezvous{NodeZeroIP: ip, ServiceBaseURL: "https://[fd00::20]:8090/", AgentToken: "agent", UserToken: "user", Workflow: "install"}
	if got != want {
		t.Errorf("ParseRendezvous = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"NODE_ZERO_IP=x\nSERVICE_BASE_URL=http://a/\n", "NODE_ZERO_IP=10.0.0.1\n", "garbage\n"} {
		if _, err := ParseRendezvous("rv", []byte(bad)); err == nil {
			t.Errorf("ParseRendezvous(%q): no error", bad)
		}
	}
}

// TestHubRendezvous: a hub agent's file names the service, the agent token
// and the infra-env and no node zero; it reads back as a hub host, and
// one without the agent token is refused.
func TestHubRendezvous(t *testing.T) {
	b := HubRendezvousEnv("http://127.0.0.1:8090", "agent", "0b5d4f3e-2c1a-4e8b-9f7d-6a5b4c3d2e1f")
	got, err := ParseRendezvous("rv", b)
	if err != nil {
		t.Fatal(err)
	}
	want := Rendezvous{ServiceBaseURL: "http://127.0.0.1:8090", AgentToken: "agent", Workflow: WorkflowInstall,
		InfraEnvID: "0b5d4f3e-2c1a-4e8b-9f7d-6a5b4c3d2e1f"}
	if got != want || !got.Hub() || got.NodeZeroIP.IsValid() {
		t.Errorf("ParseRendezvous(%q) = %+v, want %+v", b, got, want)
	}
	for _, bad := range []string{
		"SERVICE_BASE_URL=http://a/\nINFRA_ENV_ID=x\n",                                        // no agent token
		"SERVICE_BASE_URL=http://a/\nINFRA_ENV_ID=x\nPULL_SECRET_TOKEN=a\nNODE_ZERO_IP=bad\n", // a bad address is still bad
		"SERVICE_BASE_URL=http://a/\nPULL_SECRET_TOKEN=a\n",                                   // neither node zero nor a hub
	} {
		if _, err := ParseRendezvous("rv", []byte(bad)); err == nil {
			t.Errorf("ParseRendezvous(%q): no error", bad)
		}
	}
	if rv, _ := ParseRendezvous("rv", RendezvousEnv(netip.MustParseAddr("10.0.0.5"), "a", "u", WorkflowInstall)); rv.Hub() {
		t.Errorf("a node-zero rendezvous-host.env reads as a hub's: %+v", rv)
	}
}

// TestMachineBinding: the binding round-trips and wants its Machine.
func TestMachineBinding(t *testing.T) {
	b := MachineBinding{Namespace: "ns", Name: "m-0", UID: "u-1", Cluster: "c"}
	got, err := ParseMachineBinding("machine", b.Marshal())
	if err != nil || got != b {
		t.Errorf("ParseMachineBinding(Marshal) = %+v, %v, want %+v", got, err, b)
	}
	for _, bad := range []string{`{"namespace":"ns"}`, `{`, `[]`} {
		if _, err := ParseMachineBinding("machine", []byte(bad)); err == nil {
			t.Errorf("ParseMachineBinding(%q): no error", bad)
		}
	}
}
