package testbed

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newBed is NewT after the CI-fails/else-skips checks of this package.
func newBed(t *testing.T, cfg Config) *Bed {
	t.Helper()
	needTool(t, "ip")
	needRoot(t)
	return NewT(t, cfg)
}

func TestHostsTalk(t *testing.T) {
	prefix := freePrefix(t)
	mac := net.HardwareAddr{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01}
	b := newBed(t, Config{Prefix: prefix, Prefix6: pfx("fd4e:7a:1::/64"), Hosts: []HostSpec{
		{Name: "a", Static: true, MAC: mac},
		{Name: "b", Static: true, NIC: "eno2"},
		{Name: "c"},
	}})
	a, hb, c := b.Hosts[0], b.Hosts[1], b.Hosts[2]

	t.Run("names and MACs", func(t *testing.T) {
		for i, h := range b.Hosts {
			out, err := runIP(t.Context(), "-n", h.NS, "-j", "link", "show", "dev", h.NIC)
			if err != nil {
				t.Fatal(err)
			}
			var links []struct {
				Name    string `json:"ifname"`
				Address string `json:"address"`
			}
			if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
				t.Fatalf("ip -j link in %s: %v, %s", h.NS, err, out)
			}
			if links[0].Name != h.NIC || links[0].Address != h.MAC.String() {
				t.Errorf("hosts[%d] link = %s %s, want %s %s", i, links[0].Name, links[0].Address, h.NIC, h.MAC)
			}
		}
		if a.MAC.String() != mac.String() || a.NIC != "enp1s0" || hb.NIC != "eno2" {
			t.Errorf("hosts = %s %s, %s, want %s enp1s0, eno2", a.MAC, a.NIC, hb.NIC, mac)
		}
		if c.MAC[0] != 0x02 || c.MAC[5] != 2 || c.MAC.String() != deriveMAC(b.ID, 2).String() {
			t.Errorf("derived MAC of hosts[2] = %s, want %s", c.MAC, deriveMAC(b.ID, 2))
		}
		if a.NS != "nzb"+b.ID+"-a" || b.Switch != "nzb"+b.ID+"-sw" {
			t.Errorf("namespaces = %s, %s, want nzb%s-a, nzb%s-sw", a.NS, b.Switch, b.ID, b.ID)
		}
	})

	t.Run("addresses", func(t *testing.T) {
		got, err := a.Addrs(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []netip.Prefix{a.Addr, a.Addr6} {
			if !slices.Contains(got, want) {
				t.Errorf("a.Addrs() = %v, want it to hold %s", got, want)
			}
		}
		got, err = c.Addrs(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range got {
			if !p.Addr().IsLinkLocalUnicast() {
				t.Errorf("c.Addrs() = %v: non-static host holds %s", got, p)
			}
		}
		if want := netip.PrefixFrom(nth(prefix.Addr(), 12), 24); c.Addr != want {
			t.Errorf("c.Addr = %s, want %s (configured by the software under test)", c.Addr, want)
		}
	})

	t.Run("quiet ipv6", func(t *testing.T) {
		for _, name := range []string{"accept_dad", "router_solicitations"} {
			for _, h := range b.Hosts {
				path := "/proc/sys/net/ipv6/conf/" + h.NIC + "/" + name
				out, err := h.Command(t.Context(), "cat", path).Output()
				if err != nil || strings.TrimSpace(string(out)) != "0" {
					t.Errorf("%s in %s = %q, %v, want 0", path, h.NS, out, err)
				}
			}
		}
	})

	t.Run("tcp", func(t *testing.T) {
		serve(t, a.Command, net.JoinHostPort(a.Addr.Addr().String(), "7001"), net.JoinHostPort(a.Addr6.Addr().String(), "7001"))
		mustReach(t, hb, net.JoinHostPort(a.Addr.Addr().String(), "7001"))
		mustReach(t, hb, net.JoinHostPort(a.Addr6.Addr().String(), "7001"))
	})

	t.Run("switch services", func(t *testing.T) {
		gw := net.JoinHostPort(b.Gateway.String(), "7002")
		serve(t, b.SwitchCommand, gw)
		mustReach(t, a, gw)
		// A service address added later on the bridge is reachable too.
		extra := netip.PrefixFrom(nth(prefix.Addr(), 250), 24)
		if err := b.AddAddr(t.Context(), b.Switch, b.Bridge, extra); err != nil {
			t.Fatal(err)
		}
		svc := net.JoinHostPort(extra.Addr().String(), "7003")
		serve(t, b.SwitchCommand, svc)
		mustReach(t, hb, svc)
	})
}

func TestSetLink(t *testing.T) {
	b := newBed(t, Config{Prefix: freePrefix(t), Hosts: []HostSpec{{Name: "a", Static: true}, {Name: "b", Static: true}}})
	a, hb := b.Hosts[0], b.Hosts[1]
	addr := net.JoinHostPort(a.Addr.Addr().String(), "7001")
	serve(t, a.Command, addr)
	mustReach(t, hb, addr)

	if err := a.SetLink(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	if up := carrier(t, a); up {
		t.Errorf("a's NIC has carrier after SetLink(false)")
	}
	if got, err := dial(t, hb, addr, time.Second); err == nil {
		t.Errorf("dial %s after SetLink(false) = %q, want a failure", addr, got)
	}

	if err := a.SetLink(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	if up := carrier(t, a); !up {
		t.Errorf("a's NIC has no carrier after SetLink(true)")
	}
	mustReach(t, hb, addr)
}

// carrier reports whether h's NIC has its lower layer up.
func carrier(t *testing.T, h *Host) bool {
	t.Helper()
	out, err := runIP(t.Context(), "-n", h.NS, "-j", "link", "show", "dev", h.NIC)
	if err != nil {
		t.Fatal(err)
	}
	var links []struct {
		Flags []string `json:"flags"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		t.Fatalf("ip -j link in %s: %v, %s", h.NS, err, out)
	}
	return slices.Contains(links[0].Flags, "LOWER_UP")
}

// rootState is the root namespace's links, addresses and routes, without
// counters or lifetimes.
func rootState(t *testing.T) []string {
	t.Helper()
	var state []string
	read := func(args ...string) []map[string]any {
		out, err := runIP(t.Context(), args...)
		if err != nil {
			t.Fatal(err)
		}
		var v []map[string]any
		if len(strings.TrimSpace(string(out))) > 0 {
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("ip %v: %v", args, err)
			}
		}
		return v
	}
	keep := func(kind string, m map[string]any, keys ...string) {
		parts := []string{kind}
		for _, k := range keys {
			if v, ok := m[k]; ok {
				b, _ := json.Marshal(v)
				parts = append(parts, k+"="+string(b))
			}
		}
		state = append(state, strings.Join(parts, " "))
	}
	for _, l := range read("-j", "addr", "show") {
		keep("link", l, "ifindex", "ifname", "address", "mtu", "master", "link_type")
		infos, _ := l["addr_info"].([]any)
		for _, ai := range infos {
			if m, ok := ai.(map[string]any); ok {
				m["ifname"] = l["ifname"]
				keep("addr", m, "ifname", "family", "local", "prefixlen")
			}
		}
	}
	for _, fam := range []string{"-4", "-6"} {
		for _, r := range read("-j", fam, "route", "show", "table", "all") {
			keep("route", r, "type", "dst", "gateway", "dev", "table")
		}
	}
	slices.Sort(state)
	return state
}

func TestRootNamespaceUntouched(t *testing.T) {
	needTool(t, "ip")
	needRoot(t)
	before := rootState(t)
	b, err := New(t.Context(), Config{Prefix: freePrefix(t), Prefix6: pfx("fd4e:7a:2::/64"),
		Hosts: []HostSpec{{Name: "a", Static: true}, {Name: "b", Static: true}, {Name: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	during := rootState(t)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	after := rootState(t)
	if diff := cmp.Diff(before, during); diff != "" {
		t.Errorf("root namespace changed while the bed ran (-before +during):\n%s", diff)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("root namespace changed by New+Close (-before +after):\n%s", diff)
	}
	for _, s := range during {
		if strings.Contains(s, b.ID) {
			t.Errorf("root namespace holds %s", s)
		}
	}
}

func TestRefusals(t *testing.T) {
	needTool(t, "ip")
	needRoot(t)
	t.Run("public prefix", func(t *testing.T) {
		_, err := New(t.Context(), Config{Prefix: pfx("198.51.100.0/24")})
		if !errors.Is(err, ErrNotPrivate) {
			t.Fatalf("New(198.51.100.0/24) = %v, want ErrNotPrivate", err)
		}
		t.Logf("refused: %v", err)
	})
	t.Run("root namespace route", func(t *testing.T) {
		used, err := rootPrefixes(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var cfg Config
		for _, p := range used {
			switch {
			case p.Bits() == 0:
			case insideAny(p, privateV4): // a root address or route, as a /24 at most
				cfg = Config{Prefix: netip.PrefixFrom(p.Addr(), min(p.Bits(), 24)).Masked()}
			case insideAny(p, []netip.Prefix{privateV6}):
				cfg = Config{Prefix: freePrefix(t), Prefix6: netip.PrefixFrom(p.Addr(), min(p.Bits(), 64)).Masked()}
			}
		}
		if !cfg.Prefix.IsValid() {
			t.Skip("the root namespace holds no private address or route to collide with (TestValidateRefuses covers the check)")
		}
		_, err = New(t.Context(), cfg)
		if !errors.Is(err, ErrOverlap) {
			t.Fatalf("New(%v) = %v, want ErrOverlap", cfg, err)
		}
		t.Logf("refused: %v", err)
	})
	t.Run("address outside the bed", func(t *testing.T) {
		prefix := freePrefix(t)
		b := newBed(t, Config{Prefix: prefix, Hosts: []HostSpec{{Name: "a"}}})
		other := netip.PrefixFrom(prefix.Addr(), 16).Masked() // wider than the bed
		for _, tc := range []struct {
			ns string
			p  netip.Prefix
		}{
			{b.Hosts[0].NS, pfx("192.0.2.9/24")},
			{b.Hosts[0].NS, other},
			{b.Hosts[0].NS, pfx("fd4e::5/64")},
			{"", netip.PrefixFrom(nth(prefix.Addr(), 5), 24)},            // the root namespace
			{"nzbother-sw", netip.PrefixFrom(nth(prefix.Addr(), 5), 24)}, // not this bed's
		} {
			err := b.AddAddr(t.Context(), tc.ns, b.Hosts[0].NIC, tc.p)
			if !errors.Is(err, ErrOutsideRange) {
				t.Errorf("AddAddr(%q, %s) = %v, want ErrOutsideRange", tc.ns, tc.p, err)
			}
		}
		got, err := b.Hosts[0].Addrs(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range got {
			if !p.Addr().IsLinkLocalUnicast() {
				t.Errorf("host holds %s after refused AddAddr calls", p)
			}
		}
		good := netip.PrefixFrom(nth(prefix.Addr(), 5), 24)
		if err := b.AddAddr(t.Context(), b.Hosts[0].NS, b.Hosts[0].NIC, good); err != nil {
			t.Errorf("AddAddr(%s) = %v, want nil", good, err)
		}
	})
}

func TestCloseKillsAndRemoves(t *testing.T) {
	b := newBed(t, Config{Prefix: freePrefix(t), Hosts: []HostSpec{{Name: "a"}}})
	sleeper := helper(t, b.Hosts[0].Command, "sleep")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- sleeper.Wait() }()
	// The sleeper is inside the namespace once ip has exec'd it.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		pids, err := nsPids(t.Context(), b.Hosts[0].NS)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(pids, sleeper.Process.Pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleeper %d never showed in %s", sleeper.Process.Pid, b.Hosts[0].NS)
		}
	}
	dirs := []string{b.Dir, b.Hosts[0].Root}

	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	err := <-waited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("sleeper ended with %v, want SIGKILL", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	names, err := listNetns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "nzb"+b.ID+"-") {
			t.Errorf("namespace %s left after Close", n)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("directory %s left after Close: %v", d, err)
		}
	}
}

func TestSamePrefixTwice(t *testing.T) {
	prefix := freePrefix(t)
	cfg := Config{Prefix: prefix, Hosts: []HostSpec{{Name: "a", Static: true}, {Name: "b", Static: true}}}
	b1, b2 := newBed(t, cfg), newBed(t, cfg)
	if b1.Switch == b2.Switch {
		t.Fatalf("two beds share switch namespace %s", b1.Switch)
	}
	// Each bed is its own network: the same address answers in each.
	addr := net.JoinHostPort(b1.Hosts[0].Addr.Addr().String(), "7001")
	serve(t, b1.Hosts[0].Command, addr)
	mustReach(t, b1.Hosts[1], addr)
	if got, err := dial(t, b2.Hosts[1], addr, time.Second); err == nil {
		t.Errorf("bed 2 reached bed 1's server: %q", got)
	}
}

func TestReapKilledBed(t *testing.T) {
	needTool(t, "ip")
	needRoot(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe)
	child.Env = append(os.Environ(), helperEnv+"=bed", quickRaceExit(), "NZB_TESTBED_PREFIX="+freePrefix(t).String())
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var rep bedReport
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("read child's report: %v", err)
	}
	if err := json.Unmarshal(line, &rep); err != nil || rep.Error != "" {
		t.Fatalf("child's report %s: %v", line, err)
	}
	t.Cleanup(func() { // in case the test fails before the reap
		_ = syscall.Kill(rep.Escaped, syscall.SIGKILL)
		_ = os.RemoveAll(rep.Dir)
		for _, ns := range rep.Namespaces {
			if nsExists(ns) {
				_ = deleteNetns(t.Context(), ns)
			}
		}
	})

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	for _, ns := range rep.Namespaces {
		if !nsExists(ns) {
			t.Fatalf("namespace %s vanished with its creator; the test proves nothing", ns)
		}
	}
	if _, err := os.Stat(rep.Dir); err != nil {
		t.Fatalf("bed directory vanished with its creator: %v", err)
	}
	if !alive(rep.Escaped) {
		t.Fatalf("escaped process %d died with its creator; the test proves nothing", rep.Escaped)
	}

	newBed(t, Config{Prefix: freePrefix(t)}) // New reaps first

	for _, ns := range rep.Namespaces {
		if nsExists(ns) {
			t.Errorf("stale namespace %s survived New", ns)
		}
	}
	if _, err := os.Stat(rep.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale bed directory %s survived New: %v", rep.Dir, err)
	}
	// SIGKILL is delivered asynchronously; wait (boundedly) for it to land.
	for deadline := time.Now().Add(20 * time.Second); alive(rep.Escaped); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d in the stale bed still runs", rep.Escaped)
		}
	}
}

func TestNewFailureTearsDown(t *testing.T) {
	needTool(t, "ip")
	needRoot(t)
	dir := t.TempDir()
	// hosts[1]'s root already exists: New fails after making the switch
	// and hosts[0], and must undo both, leaving the caller's directory.
	if err := os.Mkdir(dir+"/b", 0o755); err != nil {
		t.Fatal(err)
	}
	ours := func() []string { // this process's namespaces: others may come and go
		names, err := listNetns(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, "nzb"+strconv.Itoa(os.Getpid())+"x") })
	}
	before := ours()
	b, err := New(t.Context(), Config{Prefix: freePrefix(t), Dir: dir, Hosts: []HostSpec{{Name: "a"}, {Name: "b"}}})
	if err == nil {
		b.Close()
		t.Fatal("New with an existing host root = nil error, want one")
	}
	t.Logf("New: %v", err)
	if diff := cmp.Diff(before, ours()); diff != "" {
		t.Errorf("namespaces changed by a failed New (-before +after):\n%s", diff)
	}
	if _, err := os.Stat(dir + "/a"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("host root %s/a left by a failed New: %v", dir, err)
	}
	if _, err := os.Stat(dir + "/b"); err != nil {
		t.Errorf("the caller's %s/b was removed: %v", dir, err)
	}
}
