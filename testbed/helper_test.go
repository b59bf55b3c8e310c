package testbed

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the programs the tests run inside a bed: with
// NZB_TESTBED_HELPER set, TestMain runs that helper instead of the tests.
const helperEnv = "NZB_TESTBED_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "serve":
		serveHelper(strings.Split(os.Getenv("NZB_TESTBED_ADDRS"), ","))
	case "dial":
		dialHelper(os.Getenv("NZB_TESTBED_ADDR"), os.Getenv("NZB_TESTBED_TIMEOUT"))
	case "sleep":
		time.Sleep(24 * time.Hour)
	case "bed":
		bedHelper()
	case "vm":
		vmHelper()
	default:
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", os.Getenv(helperEnv))
		os.Exit(2)
	}
	os.Exit(0)
}

// serveHelper listens on every addr, prints "ready", and answers each line
// a client sends with "pong <line>" until killed.
func serveHelper(addrs []string) {
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Fprintf(os.Stderr, "listen %s: %v\n", a, err)
			os.Exit(1)
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					os.Exit(1)
				}
				go func() {
					defer c.Close()
					line, err := bufio.NewReader(c).ReadString('\n')
					if err != nil {
						return
					}
					fmt.Fprintf(c, "pong %s", line)
				}()
			}
		}()
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // serve until killed or stdin closes
}

// dialHelper connects once to addr, sends "ping" and prints the answer.
func dialHelper(addr, timeout string) {
	d, err := time.ParseDuration(timeout)
	if err != nil {
		d = 5 * time.Second
	}
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dial %s: %v\n", addr, err)
		os.Exit(1)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(d))
	fmt.Fprintln(c, "ping")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		fmt.Fprintf(os.Stderr, "read from %s: %v\n", addr, err)
		os.Exit(1)
	}
	fmt.Print(line)
}

// bedReport is what bedHelper prints for the parent test.
type bedReport struct {
	Namespaces []string
	Dir        string
	Escaped    int // a process in a host namespace outside every group the bed kills
	Error      string
}

// bedHelper builds a bed, starts a process in its first host that would
// survive this process (new session, no parent-death signal), reports, and
// waits to be killed.
func bedHelper() {
	var rep bedReport
	defer func() {
		_ = json.NewEncoder(os.Stdout).Encode(rep)
		_, _ = io.Copy(io.Discard, os.Stdin)
	}()
	b, err := New(context.Background(), Config{
		Prefix: netip.MustParsePrefix(os.Getenv("NZB_TESTBED_PREFIX")),
		Hosts:  []HostSpec{{Name: "orphan", Static: true}},
	})
	if err != nil {
		rep.Error = err.Error()
		return
	}
	rep.Namespaces = append(rep.Namespaces, b.Switch, b.Hosts[0].NS)
	rep.Dir = b.Dir
	exe, _ := os.Executable()
	cmd := exec.Command("ip", "netns", "exec", b.Hosts[0].NS, exe)
	cmd.Env = append(os.Environ(), helperEnv+"=sleep")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		rep.Error = err.Error()
		return
	}
	// Report only once ip netns exec has entered the namespace.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if pids, _ := nsPids(context.Background(), b.Hosts[0].NS); slices.Contains(pids, cmd.Process.Pid) {
			rep.Escaped = cmd.Process.Pid
			return
		}
	}
	rep.Error = "the escaped process never entered " + b.Hosts[0].NS
}

// helper returns a command that runs this test binary as helper mode inside
// ns (through h or the bed's switch).
func helper(t *testing.T, run func(ctx context.Context, name string, args ...string) *exec.Cmd, mode string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := run(t.Context(), exe)
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode, quickRaceExit()}, env...)...)
	return cmd
}

// quickRaceExit keeps a helper built with -race from sleeping a second at
// exit (the race runtime's atexit_sleep_ms), keeping the caller's options.
func quickRaceExit() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

// serve starts a serve helper on addrs and waits for it to listen.
func serve(t *testing.T, run func(ctx context.Context, name string, args ...string) *exec.Cmd, addrs ...string) {
	t.Helper()
	cmd := helper(t, run, "serve", "NZB_TESTBED_ADDRS="+strings.Join(addrs, ","))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("server on %v: read %q, %v; stderr: %s", addrs, line, err, stderr.String())
	}
}

// dial runs one dial helper in h and returns its answer or its failure.
func dial(t *testing.T, h *Host, addr string, timeout time.Duration) (string, error) {
	t.Helper()
	cmd := helper(t, h.Command, "dial", "NZB_TESTBED_ADDR="+addr, "NZB_TESTBED_TIMEOUT="+timeout.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("dial %s from %s: %w: %s", addr, h.Name, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// mustReach dials addr from h until it answers, within a generous bound (a
// fresh link needs a moment for neighbour discovery; this is not a timing
// assertion).
func mustReach(t *testing.T, h *Host, addr string) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var got string
		if got, err = dial(t, h, addr, 2*time.Second); err == nil {
			if got != "pong ping\n" {
				t.Fatalf("dial %s from %s = %q, want %q", addr, h.Name, got, "pong ping\n")
			}
			return
		}
	}
	t.Fatalf("%s cannot reach %s: %v", h.Name, addr, err)
}

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = NeedTool

// needRoot is testbed.NeedRoot: fail under CI=true, skip elsewhere.
var needRoot = NeedRoot

// freePrefix returns a /24 inside 10.231.0.0/16 that overlaps nothing in
// the root namespace.
func freePrefix(t *testing.T) netip.Prefix {
	t.Helper()
	needTool(t, "ip")
	used, err := rootPrefixes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for x := range 256 {
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 231, byte(x), 0}), 24)
		if _, ok := overlapping(p, used); !ok {
			return p
		}
	}
	t.Fatal("no free /24 in 10.231.0.0/16")
	return netip.Prefix{}
}
