package dhcplease

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// The test binary doubles as the step runner inside a bed host: with
// helperEnv set, TestMain runs the step once in the namespace it was
// started in and prints a stepResult.
const (
	helperEnv        = "NZ_DHCPLEASE_HELPER"
	helperArgEnv     = "NZ_DHCPLEASE_ARG"
	helperModeEnv    = "NZ_DHCPLEASE_MODE"
	helperTimeoutEnv = "NZ_DHCPLEASE_TIMEOUT"
)

type stepResult struct {
	Output, Stderr string
	ExitCode       int
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "" {
		os.Exit(m.Run())
	}
	timeout, _ := time.ParseDuration(os.Getenv(helperTimeoutEnv))
	opts := Options{Mode: Mode(os.Getenv(helperModeEnv)), Timeout: timeout}
	out, stderr, code := Step(opts)(context.Background(), []string{os.Getenv(helperArgEnv)})
	_ = json.NewEncoder(os.Stdout).Encode(stepResult{out, stderr, code})
	os.Exit(0)
}

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// needRoot is testbed.NeedRoot: fail under CI=true, skip elsewhere.
var needRoot = testbed.NeedRoot

// dhcpBed is a one-host bed with dnsmasq serving .100–.200 on its switch.
type dhcpBed struct {
	bed       *testbed.Bed
	host      *testbed.Host
	leaseFile string
	ignored   string // a MAC dnsmasq never answers
}

func newDHCPBed(t *testing.T) *dhcpBed {
	t.Helper()
	needRoot(t)
	needTool(t, "ip")
	dnsmasq := needTool(t, "dnsmasq")
	var bed *testbed.Bed
	for x := 0; bed == nil; x++ {
		if x == 256 {
			t.Fatal("no free /24 in 10.233.0.0/16 for the test bed")
		}
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 233, byte(x), 0}), 24)
		b, err := testbed.New(t.Context(), testbed.Config{Prefix: p, Hosts: []testbed.HostSpec{{Name: "h0", Static: true}}})
		if errors.Is(err, testbed.ErrOverlap) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		bed = b
	}
	t.Cleanup(func() {
		if err := bed.Close(); err != nil {
			t.Errorf("close bed: %v", err)
		}
	})
	d := &dhcpBed{bed: bed, host: bed.Hosts[0], leaseFile: filepath.Join(t.TempDir(), "dnsmasq.leases"), ignored: "00:1a:4a:00:00:99"}
	base := bed.Prefix.Addr().As4()
	lo, hi := base, base
	lo[3], hi[3] = 100, 200
	ctx, cancel := context.WithCancel(context.Background())
	cmd := bed.SwitchCommand(ctx, dnsmasq, "--no-daemon", "--conf-file=/dev/null", "--port=0",
		"--interface="+bed.Bridge, "--bind-interfaces", "--no-ping", "--dhcp-authoritative",
		fmt.Sprintf("--dhcp-range=%s,%s,255.255.255.0,1h", netip.AddrFrom4(lo), netip.AddrFrom4(hi)),
		"--dhcp-option=3,"+bed.Gateway.String(), "--dhcp-leasefile="+d.leaseFile,
		"--dhcp-host="+d.ignored+",ignore", "--log-dhcp", "--log-facility=-", "--pid-file=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dnsmasq: %v", err)
	}
	var log strings.Builder
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
		_ = cmd.Wait()
		if t.Failed() || testing.Verbose() {
			t.Logf("dnsmasq log:\n%s", log.String())
		}
	})
	ready := make(chan struct{})
	go func() { // owned: ends when dnsmasq's stderr closes (killed in Cleanup)
		defer close(done)
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !signalled && strings.Contains(sc.Text(), "DHCP, IP range") {
				signalled = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		if !signalled {
			close(ready)
		}
	}()
	<-ready
	return d
}

// run runs the step in the host's namespace.
func (d *dhcpBed) run(t *testing.T, req wire.DHCPAllocationRequest, mode Mode, timeout time.Duration) stepResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := d.host.Command(t.Context(), exe)
	cmd.Env = append(os.Environ(), helperEnv+"=1", helperArgEnv+"="+wire.MustEncodeEmbedded(req),
		helperModeEnv+"="+string(mode), helperTimeoutEnv+"="+timeout.String(),
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run step in %s: %v: %s", d.host.NS, err, stderr.String())
	}
	var r stepResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("step result %q: %v", out, err)
	}
	return r
}

func (d *dhcpBed) mustAllocate(t *testing.T, req wire.DHCPAllocationRequest, mode Mode) wire.DHCPAllocationResponse {
	t.Helper()
	r := d.run(t, req, mode, 0)
	if r.ExitCode != 0 {
		t.Fatalf("step exit %d: %s", r.ExitCode, r.Stderr)
	}
	var resp wire.DHCPAllocationResponse
	if err := wire.DecodeEmbedded(r.Output, &resp); err != nil {
		t.Fatalf("step output %q: %v", r.Output, err)
	}
	return resp
}

// dnsmasqLease is one line of dnsmasq's lease file:
// "<expiry> <mac> <ip> <hostname> <client-id>".
type dnsmasqLease struct {
	expiry                  int64
	mac, ip, host, clientID string
}

// waitLease returns dnsmasq's lease for mac once it shows ip and, when
// after > 0, an expiry later than after (dnsmasq writes the file after it
// answers; the bound is generous and not a timing assertion).
func (d *dhcpBed) waitLease(t *testing.T, mac, ip string, after int64) dnsmasqLease {
	t.Helper()
	var last []dnsmasqLease
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		last = d.leases(t)
		for _, l := range last {
			if l.mac == mac && l.ip == ip && l.expiry > after {
				return l
			}
		}
	}
	t.Fatalf("dnsmasq has no lease %s for %s expiring after %d; leases: %+v", ip, mac, after, last)
	return dnsmasqLease{}
}

func (d *dhcpBed) leases(t *testing.T) []dnsmasqLease {
	t.Helper()
	b, err := os.ReadFile(d.leaseFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []dnsmasqLease
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 {
			continue // duid line or partial write
		}
		exp, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		out = append(out, dnsmasqLease{exp, f[1], f[2], f[3], f[4]})
	}
	return out
}

// links returns name → kind of every link in the host's namespace.
func (d *dhcpBed) links(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("ip", "-n", d.host.NS, "-j", "-d", "link", "show").Output()
	if err != nil {
		t.Fatalf("ip -j link in %s: %v", d.host.NS, err)
	}
	var ls []struct {
		Name string `json:"ifname"`
		Info struct {
			Kind string `json:"info_kind"`
		} `json:"linkinfo"`
	}
	if err := json.Unmarshal(out, &ls); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range ls {
		m[l.Name] = l.Info.Kind
	}
	return m
}

func (d *dhcpBed) assertNoMacvlans(t *testing.T) {
	t.Helper()
	for name, kind := range d.links(t) {
		if kind == "macvlan" || name == "api" || name == "ingress" {
			t.Errorf("link %s (%s) left in %s after the step", name, kind, d.host.NS)
		}
	}
}

func TestAllocateInBed(t *testing.T) {
	d := newDHCPBed(t)
	req := wire.DHCPAllocationRequest{Interface: d.host.NIC, APIVIPMAC: testAPIMAC, IngressVIPMAC: testIngressMAC}

	first := d.mustAllocate(t, req, ModePrivate)
	api, ingress := netip.MustParseAddr(first.APIVIPAddress), netip.MustParseAddr(first.IngressVIPAddress)
	if api == ingress || !d.bed.Prefix.Contains(api) || !d.bed.Prefix.Contains(ingress) {
		t.Fatalf("leased api %s, ingress %s: want two distinct addresses in %s", api, ingress, d.bed.Prefix)
	}
	for _, v := range []struct {
		name, mac, ip, lease string
	}{{"api", testAPIMAC, first.APIVIPAddress, first.APIVIPLease}, {"ingress", testIngressMAC, first.IngressVIPAddress, first.IngressVIPLease}} {
		dl := d.waitLease(t, v.mac, v.ip, 0)
		if want := strings.ReplaceAll(v.mac, ":", "-") + "-" + v.name; dl.host != want {
			t.Errorf("dnsmasq hostname for %s = %q, want %q", v.name, dl.host, want)
		}
		if want := "01:" + v.mac; dl.clientID != want {
			t.Errorf("dnsmasq client-id for %s = %q, want %q", v.name, dl.clientID, want)
		}
		l, err := ParseLease(v.lease)
		if err != nil {
			t.Fatalf("%s lease text: %v", v.name, err)
		}
		if l.Interface != v.name || l.Address.String() != v.ip || l.ServerID != d.bed.Gateway || l.LeaseTime != time.Hour {
			t.Errorf("%s lease = %+v, want interface %s, address %s, server %s, 1h", v.name, l, v.name, v.ip, d.bed.Gateway)
		}
		if !serviceLeaseRE.MatchString(v.lease) {
			t.Errorf("%s lease text fails the service's VerifyLease shape:\n%s", v.name, v.lease)
		}
	}
	d.assertNoMacvlans(t)
	before := map[string]int64{}
	for _, l := range d.leases(t) {
		before[l.mac] = l.expiry
	}

	// Renewal: dnsmasq stores whole seconds, so let the clock pass the
	// second of the first expiry before asking again.
	for time.Now().Unix()+3600 <= max(before[testAPIMAC], before[testIngressMAC]) {
		time.Sleep(100 * time.Millisecond)
	}
	req.APIVIPLease, req.IngressVIPLease = first.APIVIPLease, first.IngressVIPLease
	second := d.mustAllocate(t, req, ModePrivate)
	if second.APIVIPAddress != first.APIVIPAddress || second.IngressVIPAddress != first.IngressVIPAddress {
		t.Fatalf("renewal gave api %s, ingress %s; want the same %s, %s", second.APIVIPAddress, second.IngressVIPAddress, first.APIVIPAddress, first.IngressVIPAddress)
	}
	d.waitLease(t, testAPIMAC, second.APIVIPAddress, before[testAPIMAC])
	d.waitLease(t, testIngressMAC, second.IngressVIPAddress, before[testIngressMAC])
	if second.APIVIPLease == first.APIVIPLease {
		t.Errorf("renewed api lease text is unchanged:\n%s", second.APIVIPLease)
	}
	d.assertNoMacvlans(t)

	// A previous lease the server refuses (outside its range): the NAK
	// sends the step back to DISCOVER, and it still gets an address.
	stale := Lease{Interface: "api", Address: netip.MustParseAddr("192.168.254.254")}
	req.APIVIPLease = stale.String()
	third := d.mustAllocate(t, req, ModePrivate)
	if third.APIVIPAddress != first.APIVIPAddress {
		t.Errorf("after a NAK, api got %s, want its dnsmasq lease %s", third.APIVIPAddress, first.APIVIPAddress)
	}
	d.assertNoMacvlans(t)
}

// Bridge mode works as well (the mode only concerns sibling macvlans).
func TestAllocateBridgeMode(t *testing.T) {
	d := newDHCPBed(t)
	req := wire.DHCPAllocationRequest{Interface: d.host.NIC, APIVIPMAC: "00:1a:4a:01:02:03", IngressVIPMAC: "00:1a:4a:01:02:04"}
	resp := d.mustAllocate(t, req, ModeBridge)
	d.waitLease(t, req.APIVIPMAC, resp.APIVIPAddress, 0)
	d.waitLease(t, req.IngressVIPMAC, resp.IngressVIPAddress, 0)
	d.assertNoMacvlans(t)
}

func TestAllocateRefusesAndCleansUp(t *testing.T) {
	d := newDHCPBed(t)
	linksBefore := d.links(t)

	// An interface the host does not have: not run, nothing made.
	r := d.run(t, wire.DHCPAllocationRequest{Interface: "nosuch0", APIVIPMAC: testAPIMAC, IngressVIPMAC: testIngressMAC}, "", 0)
	if r.ExitCode != step.ExitNotRun || !strings.Contains(r.Stderr, ErrNoInterface.Error()) {
		t.Errorf("step on a missing interface = exit %d, %q; want %d, %q", r.ExitCode, r.Stderr, step.ExitNotRun, ErrNoInterface)
	}

	// A server that never answers: the step gives up at its timeout and
	// still deletes the macvlan.
	r = d.run(t, wire.DHCPAllocationRequest{Interface: d.host.NIC, APIVIPMAC: d.ignored, IngressVIPMAC: testIngressMAC}, "", 3*time.Second)
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "deadline exceeded") {
		t.Errorf("step with no answer = exit %d, %q; want 1 and a deadline error", r.ExitCode, r.Stderr)
	}
	d.assertNoMacvlans(t)

	// A link already named "api" that is not ours is left alone.
	if out, err := exec.Command("ip", "-n", d.host.NS, "link", "add", "api", "type", "bridge").CombinedOutput(); err != nil {
		t.Fatalf("add bridge api link: %v: %s", err, out)
	}
	r = d.run(t, wire.DHCPAllocationRequest{Interface: d.host.NIC, APIVIPMAC: testAPIMAC, IngressVIPMAC: testIngressMAC}, "", 0)
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, ErrNameInUse.Error()) {
		t.Errorf("step with a foreign api link = exit %d, %q; want 1, %q", r.ExitCode, r.Stderr, ErrNameInUse)
	}
	after := d.links(t)
	if after["api"] != "bridge" {
		t.Errorf("the foreign api link became %q, want it untouched (bridge)", after["api"])
	}
	delete(after, "api")
	for name := range linksBefore {
		if _, ok := after[name]; !ok {
			t.Errorf("link %s disappeared", name)
		}
	}
	if len(after) != len(linksBefore) {
		t.Errorf("links after = %v, want %v plus the bridge", after, linksBefore)
	}
}
