package localapi

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// proc is one child process (etcd, kube-apiserver) with its log file.
type proc struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{} // closed when the process has ended
	err       error         // how it ended; read after done
}

// startProc starts bin with args, its output appended to logPath. The
// process gets a clean environment (no proxy, no ETCD_* or KUBE* variables
// from ours), its own process group (a terminal's ^C reaches the owner,
// which stops it in order) and SIGKILL when the owner's thread dies.
func startProc(name, bin string, args []string, logPath string) (*proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/nonexistent"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// exited returns how the process ended, with the end of its log, or nil
// while it runs.
func (p *proc) exited() error {
	select {
	case <-p.done:
		err := p.err
		if err == nil {
			err = errors.New("exited")
		}
		return fmt.Errorf("%s ended: %v (log %s)%s", p.name, err, p.log, tail(p.log, 15))
	default:
		return nil
	}
}

// stop sends SIGTERM, then SIGKILL when the process has not ended within
// timeout, and waits for it. It reports whether SIGKILL was needed.
func (p *proc) stop(timeout time.Duration) (killed bool) {
	select {
	case <-p.done:
		return false
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return false
	case <-t.C:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return true
}

// tail returns the last n lines of a file, indented, for an error.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var s strings.Builder
	for _, l := range lines {
		if len(l) > 300 {
			l = append(l[:300:300], "…"...)
		}
		s.WriteString("\n  ")
		s.Write(l)
	}
	return s.String()
}
