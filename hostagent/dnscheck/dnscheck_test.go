package dnscheck

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/testbed"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// startDnsmasq runs a dnsmasq answering only for c.test on a free
// 127.0.0.1 port, forwarding nothing, and returns its "host:port".
func startDnsmasq(t *testing.T) string {
	t.Helper()
	dnsmasq := needTool(t, "dnsmasq")
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	cmd := exec.CommandContext(ctx, dnsmasq, "--no-daemon", "--conf-file=/dev/null",
		fmt.Sprintf("--port=%d", port), "--listen-address=127.0.0.1", "--bind-interfaces",
		"--no-resolv", "--no-hosts", "--user=root", "--pid-file=",
		"--local=/c.test/", // NXDOMAIN for other c.test names
		"--host-record=api.c.test,10.1.2.3,fd00::3",
		"--host-record=v4.c.test,10.1.2.4",
		"--host-record=v6.c.test,fd00::6",
		"--cname=www.c.test,api.c.test",
	)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start dnsmasq: %v", err)
	}
	var wg sync.WaitGroup
	exited := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(exited)
		_ = cmd.Wait() // killed by cancel at cleanup
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		if t.Failed() {
			t.Logf("dnsmasq output:\n%s", out.String())
		}
	})
	server := fmt.Sprintf("127.0.0.1:%d", port)
	r := Options{Server: server}.resolver()
	deadline := time.After(time.Minute) // bounds a hang only
	for {
		qctx, qcancel := context.WithTimeout(context.Background(), time.Second)
		_, err := r.LookupHost(qctx, "v4.c.test")
		qcancel()
		if err == nil {
			return server
		}
		select {
		case <-exited:
			t.Fatalf("dnsmasq exited: %s", out.String())
		case <-deadline:
			t.Fatalf("dnsmasq never answered: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freePort returns a port free for both UDP and TCP on 127.0.0.1 a moment
// ago.
func freePort(t *testing.T) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		l.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

func TestStepDnsmasq(t *testing.T) {
	server := startDnsmasq(t)
	arg := `{"domains":[{"domain_name":"api.c.test"},{"domain_name":"www.c.test"},{"domain_name":"v4.c.test"},{"domain_name":"v6.c.test"},{"domain_name":"missing.c.test"}]}`
	out, stderr, code := Step(Options{Server: server})(context.Background(), []string{arg})
	if code != 0 {
		t.Fatalf("step exit %d, stderr %q", code, stderr)
	}
	var got wire.DomainResolutionResponse
	if err := wire.DecodeEmbedded(out, &got); err != nil {
		t.Fatal(err)
	}
	want := wire.DomainResolutionResponse{Resolutions: []*wire.DomainResolutionResponseResolutionsItem{
		{DomainName: "api.c.test", IPv4Addresses: []string{"10.1.2.3"}, IPv6Addresses: []string{"fd00::3"}},
		{DomainName: "www.c.test", IPv4Addresses: []string{"10.1.2.3"}, IPv6Addresses: []string{"fd00::3"}, Cnames: []string{"api.c.test"}},
		{DomainName: "v4.c.test", IPv4Addresses: []string{"10.1.2.4"}},
		{DomainName: "v6.c.test", IPv6Addresses: []string{"fd00::6"}},
		{DomainName: "missing.c.test"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step output (-want +got):\n%s", diff)
	}
}

func TestResolveNoServer(t *testing.T) {
	// Nothing listens on the port: the name gets empty lists, no error.
	port := freePort(t)
	got := Resolve(context.Background(), Options{Server: fmt.Sprintf("127.0.0.1:%d", port), Timeout: 5 * time.Second}, []string{"api.c.test"})
	want := &wire.DomainResolutionResponse{Resolutions: []*wire.DomainResolutionResponseResolutionsItem{{DomainName: "api.c.test"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Resolve (-want +got):\n%s", diff)
	}
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{"two", []string{`{"domains":[{"domain_name":"a.test"},{"domain_name":"b.test"}]}`}, []string{"a.test", "b.test"}, ""},
		{"none", []string{`{}`}, []string{}, ""},
		{"no args", nil, nil, "domain resolution cmd accepts 1 params in args, given args []"},
		{"not json", []string{`{`}, nil, "domain resolution args"},
		{"no name", []string{`{"domains":[{}]}`}, nil, "Every domain in a domain request must have a domain name field"},
		{"null domain", []string{`{"domains":[null]}`}, nil, "must have a domain name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeArgs(%q) error = %v, want %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeArgs(%q): %v", tt.args, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeArgs(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

func TestStepBadArgs(t *testing.T) {
	out, stderr, code := Step(Options{})(context.Background(), []string{"a", "b"})
	if code != step.ExitNotRun || out != "" || stderr == "" {
		t.Errorf("step = %q, %q, %d; want no output, a reason, %d", out, stderr, code, step.ExitNotRun)
	}
}

func FuzzDecodeArgs(f *testing.F) {
	f.Add(`{"domains":[{"domain_name":"api.c.test"}]}`)
	f.Add(`{"domains":[{}]}`)
	f.Add(`{"domains":null}`)
	f.Fuzz(func(t *testing.T, arg string) {
		names, err := DecodeArgs([]string{arg})
		if err != nil {
			return
		}
		for _, n := range names {
			if n == "" {
				t.Fatalf("DecodeArgs(%q) accepted an empty name", arg)
			}
		}
	})
}
