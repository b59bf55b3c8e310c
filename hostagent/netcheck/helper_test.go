package netcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// The test binary doubles as the program that runs a check inside a bed
// host's namespace: with helperEnv set, TestMain runs the job in
// jobEnv and prints a jobResult instead of running the tests.
const (
	helperEnv = "NETCHECK_HELPER"
	jobEnv    = "NETCHECK_JOB"
)

// job is one check to run inside a namespace.
type job struct {
	Kind       string // "connectivity", "free", "vips"
	Arg        string // the step's JSON arg
	Interfaces []string
	NilAllow   bool // Interfaces nil: the default rule
}

// jobResult is what the helper prints.
type jobResult struct {
	Output  json.RawMessage
	Error   string
	Refused bool
	Invalid bool
	Sent    map[string]int // interface -> probes sent
	ICMP    int
	ARP     int
	Took    time.Duration // the check alone, without the process around it
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "" {
		os.Exit(m.Run())
	}
	var j job
	var res jobResult
	if err := json.Unmarshal([]byte(os.Getenv(jobEnv)), &j); err != nil {
		fmt.Fprintf(os.Stderr, "bad job: %v\n", err)
		os.Exit(2)
	}
	res = runJob(j)
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		os.Exit(2)
	}
	os.Exit(0)
}

func runJob(j job) jobResult {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st := &Stats{}
	o := Options{Interfaces: j.Interfaces, Stats: st}
	if j.NilAllow {
		o.Interfaces = nil
	} else if o.Interfaces == nil {
		o.Interfaces = []string{}
	}
	var (
		out any
		err error
	)
	start := time.Now()
	switch j.Kind {
	case "connectivity":
		var p wire.ConnectivityCheckParams
		if err = wire.DecodeEmbedded(j.Arg, &p); err == nil {
			out, err = ConnectivityCheck(ctx, p, o)
		}
	case "free":
		var r wire.FreeAddressesRequest
		if err = wire.DecodeEmbedded(j.Arg, &r); err == nil {
			out, err = FreeAddresses(ctx, r, o)
		}
	case "vips":
		var r wire.VerifyVIPsRequest
		if err = wire.DecodeEmbedded(j.Arg, &r); err == nil {
			out, err = VerifyVIPs(ctx, r, o)
		}
	default:
		err = fmt.Errorf("unknown job kind %q", j.Kind)
	}
	res := jobResult{Sent: map[string]int{}, ICMP: st.Sent(ProbeICMP, ""), ARP: st.Sent(ProbeARP, ""), Took: time.Since(start)}
	for _, i := range st.Interfaces() {
		res.Sent[i] = st.Sent("", i)
	}
	if err != nil {
		res.Error = err.Error()
		res.Refused = errors.Is(err, ErrRefused)
		res.Invalid = errors.Is(err, ErrInvalidArgs)
		return res
	}
	res.Output, _ = json.Marshal(out)
	return res
}

// run runs j inside h's namespace and returns its result; out, when not
// nil, receives the decoded output.
func run(t testing.TB, h *testbed.Host, j job, out any) jobResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(j)
	cmd := h.Command(t.Context(), exe)
	cmd.Env = append(os.Environ(), helperEnv+"=1", jobEnv+"="+string(b),
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s job in %s: %v; stderr: %s", j.Kind, h.Name, err, stderr.String())
	}
	var res jobResult
	if err := json.Unmarshal(stdout, &res); err != nil {
		t.Fatalf("%s job in %s: decode %q: %v; stderr: %s", j.Kind, h.Name, stdout, err, stderr.String())
	}
	if out != nil && res.Error == "" {
		if err := json.Unmarshal(res.Output, out); err != nil {
			t.Fatalf("%s job in %s: decode output %s: %v", j.Kind, h.Name, res.Output, err)
		}
	}
	return res
}

// ip runs ip with args inside h's namespace.
func ip(t *testing.T, h *testbed.Host, args ...string) {
	t.Helper()
	if out, err := h.Command(t.Context(), "ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %v in %s: %v: %s", args, h.Name, err, out)
	}
}

// newBed builds a bed of static hosts named names on a free /24.
func newBed(t *testing.T, names ...string) *testbed.Bed {
	t.Helper()
	needTool(t, "ip")
	needRoot(t)
	p, err := testbed.FreePrefix(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var specs []testbed.HostSpec
	for _, n := range names {
		specs = append(specs, testbed.HostSpec{Name: n, Static: true})
	}
	return testbed.NewT(t, testbed.Config{Prefix: p, Hosts: specs})
}

// params describes hosts as the service would in a connectivity-check arg.
func params(hosts ...*testbed.Host) string {
	var p wire.ConnectivityCheckParams
	for _, h := range hosts {
		p = append(p, &wire.ConnectivityCheckHost{HostID: h.Name, Nics: []*wire.ConnectivityCheckNic{{
			Name: h.NIC, MAC: h.MAC.String(), IPAddresses: []string{h.Addr.String()},
		}}})
	}
	return wire.MustEncodeEmbedded(p)
}

// addrIn returns the address n after p's network address.
func addrIn(p netip.Prefix, n int) netip.Addr {
	a := p.Masked().Addr()
	for range n {
		a = a.Next()
	}
	return a
}

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// needRoot is testbed.NeedRoot: fail under CI=true, skip elsewhere.
var needRoot = testbed.NeedRoot
