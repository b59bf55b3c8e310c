package sim

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/hostagent/dnscheck"
)

// needTool finds a tool on PATH, or skips (fails under CI=true).
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required when CI=true: %v", name, err)
		}
		t.Skipf("%s not installed (%v); CI=true makes this a failure", name, err)
	}
	return p
}

// randomLoopback is a 127.x address of the test's own.
func randomLoopback() netip.Addr {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return netip.AddrFrom4([4]byte{127, 100 + b[0]%100, 2 + b[1]%250, 2 + b[2]%250})
}

// startDNS runs a dnsmasq on a loopback address of its own that answers
// the names given (name → address) and NXDOMAIN for every other name,
// forwarding nothing; it returns its "host:port".
func startDNS(t *testing.T, records map[string]netip.Addr) string {
	t.Helper()
	dnsmasq := needTool(t, "dnsmasq")
	addr := randomLoopback()
	args := []string{"--no-daemon", "--conf-file=/dev/null", "--port=5353", "--listen-address=" + addr.String(),
		"--bind-interfaces", "--no-resolv", "--no-hosts", "--user=root", "--pid-file=", "--local=/#/"}
	var probe string
	for name, a := range records {
		args = append(args, "--host-record="+name+","+a.String())
		probe = name
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	cmd := exec.CommandContext(ctx, dnsmasq, args...)
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
	server := fmt.Sprintf("%s:5353", addr)
	r := dnscheck.Resolver(server)
	deadline := time.After(time.Minute) // bounds a hang only
	for {
		qctx, qcancel := context.WithTimeout(context.Background(), time.Second)
		_, err := r.LookupHost(qctx, probe)
		qcancel()
		if err == nil {
			return server
		}
		select {
		case <-exited:
			t.Fatalf("dnsmasq exited: %s", out.String())
		case <-deadline:
			t.Fatalf("dnsmasq never answered: %v", err)
		case <-time.After(50 * time.Millisecond): // polling a child process's readiness
		}
	}
}
