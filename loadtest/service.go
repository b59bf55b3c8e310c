package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// imageFlags name the release images the load test's install steps
// carry, as a payload would (nothing pulls them: the simulated hosts write
// simulated disks).
var imageFlags = []string{
	"--installer-image", "registry.loadtest.invalid/ocp/agent-installer-orchestrator:4.18.0",
	"--controller-image", "registry.loadtest.invalid/ocp/agent-installer-csr-approver:4.18.0",
	"--mco-image", "registry.loadtest.invalid/ocp/machine-config-operator:4.18.0",
	"--must-gather-image", "registry.loadtest.invalid/ocp/must-gather:4.18.0",
}

// Service is a `nodezero service` child process.
type Service struct {
	// URL is the service's, http://127.0.0.1:port, without the API base.
	URL         string
	cmd         *exec.Cmd
	dir         string
	firstAnswer time.Duration
	exited      chan struct{}
	waitErr     error
}

// StartService starts bin's service in dir on a loopback port of its
// choosing, with extra flags, and returns once /health answers.
// firstAnswer is process start to that answer. The service's log is
// dir/service.log.
func StartService(ctx context.Context, bin, dir string, extra ...string) (*Service, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "service.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	lw := &listenWatcher{found: make(chan string, 1)}
	args := append([]string{"service", "--dir", dir, "--listen", "127.0.0.1:0"}, imageFlags...)
	cmd := exec.Command(bin, append(args, extra...)...)
	cmd.Stdout, cmd.Stderr = lw, logf
	p := &Service{cmd: cmd, dir: dir, exited: make(chan struct{})}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start service: %w", err)
	}
	go func() { // ends when the child exits; stop makes sure it does
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	fail := func(err error) (*Service, error) {
		_ = p.Stop()
		return nil, fmt.Errorf("start service (log in %s): %w", logf.Name(), err)
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	select {
	case p.URL = <-lw.found:
	case <-p.exited:
		return fail(fmt.Errorf("service exited: %v", p.waitErr))
	case <-deadline.C:
		return fail(errors.New("no \"listening on\" line within 10s"))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	for {
		resp, err := hc.Get(p.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				p.firstAnswer = time.Since(start)
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return fail(fmt.Errorf("service exited: %v", p.waitErr))
		case <-deadline.C:
			return fail(fmt.Errorf("/health did not answer 200 within 10s: %v", err))
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// PID is the service's process ID.
func (p *Service) PID() int { return p.cmd.Process.Pid }

// Alive fails once the service has exited.
func (p *Service) Alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("service exited: %v (log in %s)", p.waitErr, filepath.Join(p.dir, "service.log"))
	default:
		return nil
	}
}

// Stop sends SIGTERM, and SIGKILL if the service is still there after 10 s.
func (p *Service) Stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return errors.New("service did not stop within 10s of SIGTERM; killed")
	}
}

// listenWatcher is the service's stdout: it finds the "listening on" line
// and reports the base URL once.
type listenWatcher struct {
	mu    sync.Mutex
	buf   []byte
	done  bool
	found chan string
}

func (w *listenWatcher) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(b), nil
	}
	w.buf = append(w.buf, b...)
	for {
		line, rest, ok := bytes.Cut(w.buf, []byte("\n"))
		if !ok {
			return len(b), nil
		}
		w.buf = rest
		if _, u, ok := strings.Cut(string(line), "listening on "); ok {
			w.done = true
			w.found <- strings.TrimSuffix(strings.TrimSpace(u), wire.APIBasePath)
			return len(b), nil
		}
	}
}

// ReadToken reads one of the tokens the service made in dir/auth
// ("user.token", "agent.token").
func ReadToken(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "auth", name))
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// RegisterCluster creates the cluster of the test — three control-plane
// nodes, OpenShift 4.18, VIPs in the hosts' network — and its infra-env.
func RegisterCluster(ctx context.Context, c *wire.Client, apiVIP, ingressVIP string) (clusterID, infraEnvID string, err error) {
	cp := int64(Masters)
	cl, err := c.RegisterCluster(ctx, wire.ClusterCreateParams{
		Name: "loadtest", OpenshiftVersion: "4.18", BaseDNSDomain: "loadtest.example.com",
		PullSecret: pullSecret, ControlPlaneCount: &cp,
		// The default 10.128.0.0/14 with /23 per node holds 512 nodes; a
		// /12 holds 2048, so a thousand-host cluster can become ready.
		ClusterNetworks: []*wire.ClusterNetwork{{CIDR: "10.128.0.0/12", HostPrefix: 23}},
		APIVIPs:         []*wire.APIVIP{{IP: wire.IP(apiVIP)}},
		IngressVIPs:     []*wire.IngressVIP{{IP: wire.IP(ingressVIP)}},
	})
	if err != nil {
		return "", "", err
	}
	ie, err := c.RegisterInfraEnv(ctx, wire.InfraEnvCreateParams{
		Name: "loadtest-infra-env", PullSecret: pullSecret, ClusterID: &cl.ID,
		OpenshiftVersion: "4.18", ImageType: wire.ImageTypeFullISO,
	})
	if err != nil {
		return "", "", err
	}
	return cl.ID, ie.ID, nil
}
