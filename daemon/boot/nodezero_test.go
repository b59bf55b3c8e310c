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

	"github.com/nodezero/nodezero/onhost"
)

func TestHolderOf(t *testing.T) {
	links := []Link{
		{Name: "lo", Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8"), netip.MustParsePrefix("::1/128")}},
		{Name: "eth0", MAC: "52:54:00:aa:bb:01", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.111.20/24"), netip.MustParsePrefix("fd2e:6f44:5dd8::14/64")}},
		{Name: "eth1", MAC: "52:54:00:aa:bb:02"},
	}
	tests := []struct {
		ip   string
		want string // holder's name, "" = none
	}{
		{"192.168.111.20", "eth0"},
		{"fd2e:6f44:5dd8:0::14", "eth0"}, // a non-canonical form of the same address
		{"::ffff:192.168.111.20", "eth0"},
		{"192.168.111.21", ""},
		{"127.0.0.1", "lo"},
	}
	for _, tt := range tests {
		l, ok := HolderOf(links, netip.MustParseAddr(tt.ip))
		if got := map[bool]string{true: l.Name}[ok]; got != tt.want {
			t.Errorf("HolderOf(%s) = %q, want %q", tt.ip, got, tt.want)
		}
	}
}

// lateLinks gains the address on the third call, as a DHCP lease would.
type lateLinks struct {
	mu    sync.Mutex
	calls int
}

func (l *lateLinks) Links() ([]Link, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	eth0 := Link{Name: "eth0", MAC: "52:54:00:aa:bb:01"}
	if l.calls >= 3 {
		eth0.Addrs = []netip.Prefix{netip.MustParsePrefix("192.168.111.20/24")}
	}
	return []Link{eth0}, nil
}

func TestDecideNodeZero(t *testing.T) {
	ctx := context.Background()
	ip := netip.MustParseAddr("192.168.111.20")
	d, err := DecideNodeZero(ctx, &lateLinks{}, ip, time.Second, time.Millisecond)
	if err != nil || !d.NodeZero || d.MAC != "52:54:00:aa:bb:01" {
		t.Fatalf("late address: %+v, %v; want node zero with eth0's MAC", d, err)
	}
	if want := "This host (192.168.111.20) is the rendezvous host."; d.Status() != want {
		t.Errorf("Status = %q, want %q", d.Status(), want)
	}
	other := netip.MustParseAddr("192.168.111.99")
	d, err = DecideNodeZero(ctx, &lateLinks{}, other, 20*time.Millisecond, time.Millisecond)
	if err != nil || d.NodeZero {
		t.Fatalf("foreign address: %+v, %v; want not node zero", d, err)
	}
	if want := "This host is not the rendezvous host. The rendezvous host is at 192.168.111.99."; d.Status() != want {
		t.Errorf("Status = %q, want %q", d.Status(), want)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := DecideNodeZero(cctx, &lateLinks{}, other, time.Minute, time.Second); err == nil {
		t.Error("a cancelled decision returned no error")
	}
}

// TestSystemLinks reads this process's own interfaces: loopback holds
// 127.0.0.1 in every network namespace.
func TestSystemLinks(t *testing.T) {
	links, err := SystemLinks{}.Links()
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := HolderOf(links, netip.MustParseAddr("127.0.0.1")); !ok || l.Name != "lo" {
		t.Errorf("127.0.0.1 held by %+v (%v), want lo", l, ok)
	}
}

func TestWriteNode0(t *testing.T) {
	root := t.TempDir()
	d := Decision{NodeZero: true, IP: netip.MustParseAddr("192.168.111.20"), MAC: "52:54:00:aa:bb:01"}
	if err := WriteNode0(root, d); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, onhost.Node0Path))
	if err != nil || !strings.Contains(string(b), "\nBOOTSTRAP_HOST_MAC=52:54:00:aa:bb:01\n") {
		t.Fatalf("node0 = %q, %v", b, err)
	}
	if err := WriteNode0(root, Decision{IP: d.IP}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, onhost.Node0Path)); !os.IsNotExist(err) {
		t.Errorf("node0 of a host that is not node zero: %v, want removed", err)
	}
}
