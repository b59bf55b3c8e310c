package boot

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/onhost"
)

type fixedLinks []Link

func (l fixedLinks) Links() ([]Link, error) { return l, nil }

// configuredRoot is a host root as a loaded config image leaves it: the
// env file, a hostname for MAC …:02 and static network for it.
func configuredRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	layNetwork(t, root, staticHost("52:54:00:aa:bb:01", "192.168.111.20"), staticHost("52:54:00:aa:bb:02", "192.168.111.21"))
	files := map[string]string{
		onhost.RendezvousEnvPath:            "NODE_ZERO_IP=192.168.111.20\nSERVICE_BASE_URL=http://192.168.111.20:8090/\nPULL_SECRET_TOKEN=agent-token\nUSER_AUTH_TOKEN=user-token\n",
		HostnamesDir + "/52:54:00:aa:bb:01": "master-0\n",
		HostnamesDir + "/52:54:00:aa:bb:02": "master-1\n",
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestSequence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		links    fixedLinks
		nodeZero bool
		hostname string
	}{
		{"node zero", fixedLinks{{Name: "ens3", MAC: "52:54:00:aa:bb:01", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.111.20/24")}}}, true, "master-0"},
		{"another host", fixedLinks{{Name: "ens3", MAC: "52:54:00:aa:bb:02", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.111.21/24")}}}, false, "master-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := configuredRoot(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var mu sync.Mutex
			var lines []string
			started := map[string]Env{}
			wait := func(name string) func(context.Context, Env) error {
				return func(ctx context.Context, env Env) error {
					mu.Lock()
					started[name] = env
					both := len(started) == map[bool]int{true: 2, false: 1}[tc.nodeZero]
					mu.Unlock()
					if both {
						cancel()
					}
					<-ctx.Done()
					return ctx.Err()
				}
			}
			s := &Sequence{
				Root: root, Links: tc.links, Board: issue.NewBoard(root), Hostname: RootHostname{Root: root},
				NodeZeroWindow: 10 * time.Millisecond, NodeZeroInterval: time.Millisecond,
				Service: wait("service"), Agent: wait("agent"),
				Status: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() },
			}
			if err := s.Run(ctx); err != context.Canceled {
				t.Fatalf("Run = %v, want context.Canceled once the test stops it", err)
			}
			if _, ok := started["agent"]; !ok {
				t.Error("the agent did not start")
			}
			if _, ok := started["service"]; ok != tc.nodeZero {
				t.Errorf("service started = %v, want %v", ok, tc.nodeZero)
			}
			env := started["agent"]
			if env.NodeZero != tc.nodeZero || env.ServiceBaseURL != "http://192.168.111.20:8090/" || env.AgentToken != "agent-token" {
				t.Errorf("agent env %+v", env)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "etc/hostname")); strings.TrimSpace(string(b)) != tc.hostname {
				t.Errorf("hostname %q, want %s", b, tc.hostname)
			}
			if _, err := os.Stat(filepath.Join(root, SystemConnectionsDir, "ens3.nmconnection")); err != nil {
				t.Errorf("static network not installed: %v", err)
			}
			_, err := os.Stat(filepath.Join(root, onhost.Node0Path))
			if (err == nil) != tc.nodeZero {
				t.Errorf("node0 present = %v, want %v", err == nil, tc.nodeZero)
			}
			issueText, _ := os.ReadFile(filepath.Join(root, "etc/issue.d/60-rendezvous-host.issue"))
			want := map[bool]string{true: "This host (192.168.111.20) is the rendezvous host.",
				false: "This host is not the rendezvous host. The rendezvous host is at 192.168.111.20."}[tc.nodeZero]
			if !strings.Contains(string(issueText), want) {
				t.Errorf("console says %q, want %q", issueText, want)
			}
			if got := strings.Join(lines, "\n"); !strings.Contains(got, "Static network configuration host") || !strings.Contains(got, want) {
				t.Errorf("status lines:\n%s", got)
			}
		})
	}
}

// TestSequenceHubAgent: a host whose rendezvous-host.env names an
// infra-env (a hub service's agent) runs only its agent, with that
// infra-env, at once (no node-zero window), and drops a node0 record an
// earlier boot left.
func TestSequenceHubAgent(t *testing.T) {
	root := t.TempDir()
	for p, data := range map[string][]byte{
		onhost.RendezvousEnvPath: onhost.HubRendezvousEnv("http://127.0.0.1:8090", "agent-token", "ie-1"),
		onhost.Node0Path:         onhost.Node0("52:54:00:aa:bb:01"),
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var serviceRan bool
	var agentEnv Env
	s := &Sequence{
		Root: root, Board: issue.NewBoard(root),
		// The host holds 127.0.0.1, which would make any node-zero host
		// with a loopback rendezvous its own node zero.
		Links:          fixedLinks{{Name: "lo", Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}}},
		NodeZeroWindow: time.Hour, NodeZeroInterval: time.Hour, // a poll would outlast the test's deadline
		Service: func(ctx context.Context, env Env) error { serviceRan = true; return nil },
		Agent: func(ctx context.Context, env Env) error {
			agentEnv = env
			cancel()
			return ctx.Err()
		},
	}
	if err := s.Run(ctx); err != context.Canceled {
		t.Fatalf("Run = %v, want context.Canceled once the agent stops it", err)
	}
	if serviceRan || agentEnv.NodeZero {
		t.Errorf("service ran = %v, node zero = %v: a hub agent is never node zero", serviceRan, agentEnv.NodeZero)
	}
	if agentEnv.InfraEnvID != "ie-1" || agentEnv.AgentToken != "agent-token" || agentEnv.ServiceBaseURL != "http://127.0.0.1:8090" {
		t.Errorf("agent env %+v", agentEnv)
	}
	if _, err := os.Stat(filepath.Join(root, onhost.Node0Path)); err == nil {
		t.Error("node0 is still there")
	}
	issueText, _ := os.ReadFile(filepath.Join(root, "etc/issue.d/60-rendezvous-host.issue"))
	if want := "This host is an agent of the service at http://127.0.0.1:8090."; !strings.Contains(string(issueText), want) {
		t.Errorf("console says %q, want %q", issueText, want)
	}
}

func TestReadEnvErrors(t *testing.T) {
	root := t.TempDir()
	if _, err := ReadEnv(root); err == nil {
		t.Error("no env file: no error")
	}
	p := filepath.Join(root, onhost.RendezvousEnvPath)
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("NODE_ZERO_IP=not-an-ip\nSERVICE_BASE_URL=http://x/\n"), 0o644)
	if _, err := ReadEnv(root); err == nil || !strings.Contains(err.Error(), "NODE_ZERO_IP") {
		t.Errorf("bad IP: %v", err)
	}
}

// TestApplyNetworkOnce: keyfiles installed while NetworkManager runs are
// applied once; a restart or reboot with the same keyfiles does not apply
// them again, a changed config does.
func TestApplyNetworkOnce(t *testing.T) {
	root := configuredRoot(t)
	links := fixedLinks{{Name: "ens3", MAC: "52:54:00:aa:bb:01", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.111.20/24")}}}
	var applied []NetworkResult
	boot := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stop := func(ctx context.Context, _ Env) error { cancel(); return ctx.Err() }
		s := &Sequence{Root: root, Links: links, Board: issue.NewBoard(root),
			NodeZeroWindow: time.Millisecond, NodeZeroInterval: time.Millisecond, Service: stop, Agent: stop,
			ApplyNetwork: func(_ context.Context, r NetworkResult) error { applied = append(applied, r); return nil }}
		if err := s.Run(ctx); err != context.Canceled {
			t.Fatal(err)
		}
	}
	boot()
	boot()
	if len(applied) != 1 || applied[0].HostDir != "host0" || strings.Join(applied[0].Installed, ",") != "ens3.100.nmconnection,ens3.nmconnection" {
		t.Fatalf("applied %+v, want host0's keyfiles once", applied)
	}
	os.RemoveAll(filepath.Join(root, "etc/assisted/network"))
	layNetwork(t, root, staticHost("52:54:00:aa:bb:01", "192.168.111.30"), staticHost("52:54:00:aa:bb:02", "192.168.111.21"))
	boot()
	if len(applied) != 2 {
		t.Fatalf("a changed config was applied %d times in all, want 2", len(applied))
	}
}
