package loadtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/loadtest/procstat"
)

// realAgents are `nodezero agent` child processes.
type realAgents struct {
	cmds   []*exec.Cmd
	logs   []string
	exited []chan struct{}
	dns    *exec.Cmd // the agents' resolver
}

// alive fails once an agent has exited: agents run until stopped.
func (ra *realAgents) alive() error {
	for i, done := range ra.exited {
		select {
		case <-done:
			return fmt.Errorf("agent exited early: %s (log in %s)", ra.cmds[i].ProcessState, ra.logs[i])
		default:
		}
	}
	return nil
}

// startRealAgents starts one agent per hardware tree, host i on
// 127.0.0.(11+i)/8.
func startRealAgents(o Options, dir, url, infraEnvID, token string) (*realAgents, error) {
	ra := &realAgents{}
	dns, err := startResolver(dir)
	if err != nil {
		return nil, err
	}
	ra.dns = dns.cmd
	for i, hw := range Hardware[:o.Hosts] {
		logf, err := os.Create(filepath.Join(dir, "agent-"+hw+".log"))
		if err != nil {
			ra.stop()
			return nil, err
		}
		cmd := exec.Command(o.Bin, "agent", "--url", url, "--infra-env-id", infraEnvID, "--token", token,
			"--root", filepath.Join(o.HW, hw), "--host-address", fmt.Sprintf("127.0.0.%d/8", 11+i),
			"--hostname", hw, "--wait", o.Wait.String(), "--dns-server", dns.addr)
		cmd.Stdout, cmd.Stderr = logf, logf
		err = cmd.Start()
		logf.Close()
		if err != nil {
			ra.stop()
			return nil, fmt.Errorf("start agent %s: %w", hw, err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }() // ends when the child exits; stop makes sure it does
		ra.cmds, ra.exited, ra.logs = append(ra.cmds, cmd), append(ra.exited, done), append(ra.logs, logf.Name())
	}
	return ra, nil
}

// cpu is the CPU the agents used so far.
func (ra *realAgents) cpu() time.Duration {
	var sum time.Duration
	for _, c := range ra.cmds {
		if p, err := procstat.Read(c.Process.Pid); err == nil {
			sum += p.CPU
		}
	}
	return sum
}

// resolver is the loopback hosts' resolver: dnsmasq on 127.0.0.1 that knows
// no names and asks nobody, so domain-resolution runs and every query
// stays on this machine (the cluster's VIPs need no records).
type resolver struct {
	cmd  *exec.Cmd
	addr string
}

func startResolver(dir string) (*resolver, error) {
	bin, err := exec.LookPath("dnsmasq")
	if err != nil {
		return nil, fmt.Errorf("real agents need dnsmasq as their resolver (apt-get install dnsmasq-base): %w", err)
	}
	l, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.LocalAddr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	logf, err := os.Create(filepath.Join(dir, "dnsmasq.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--no-daemon", "--conf-file=/dev/null", "--listen-address=127.0.0.1", "--bind-interfaces",
		"--port="+port, "--no-resolv", "--no-hosts", "--local=/#/", "--pid-file="+filepath.Join(dir, "dnsmasq.pid"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dnsmasq: %w", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return &resolver{cmd: cmd, addr: addr}, nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("dnsmasq on %s did not answer: %w (log in %s)", addr, err, logf.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends every agent: SIGTERM, then SIGKILL after 5 s.
func (ra *realAgents) stop() {
	if ra.dns != nil {
		_ = ra.dns.Process.Kill()
		_ = ra.dns.Wait()
		ra.dns = nil
	}
	for _, c := range ra.cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(5 * time.Second)
	for i, done := range ra.exited {
		select {
		case <-done:
		case <-time.After(time.Until(deadline)):
			_ = ra.cmds[i].Process.Kill()
			<-done
		}
	}
}
