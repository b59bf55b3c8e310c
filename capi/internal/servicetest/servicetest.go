// Package servicetest runs a real `nodezero service` for the providers'
// tests: a child process on 127.0.0.1 with its SQLite file and auth folder
// in a test directory, killed with SIGKILL and restarted on the same port
// when a test asks (the hosts' config images hold its URL).
//
// The binary is $NODEZERO_BIN when set (CI sets it to the bin/nodezero
// `make build` made), else built once per test process from the main
// module (../cmd/nodezero, CGO_ENABLED=0) into a temporary folder.
//
// It imports the main module's loadtest (which owns starting a service and
// waiting for /health) and wire; nothing of the providers.
package servicetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodezero/nodezero/capi/internal/service"
	"github.com/nodezero/nodezero/loadtest"
	"github.com/nodezero/nodezero/wire"
)

// Service is one running `nodezero service`.
type Service struct {
	URL        string // http://127.0.0.1:port
	Dir        string // --dir: nodezero.db, auth/, service.log
	UserToken  string
	AgentToken string

	t      testing.TB
	bin    string
	listen string
	extra  []string
	mu     sync.Mutex
	proc   *loadtest.Service
	starts int
}

// Start runs a service in a new test directory, with extra flags, and
// stops it when the test ends.
func Start(t testing.TB, extra ...string) *Service {
	t.Helper()
	bin := Binary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := l.Addr().String()
	l.Close()
	s := &Service{Dir: t.TempDir(), t: t, bin: bin, listen: listen, extra: extra}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	for file, dst := range map[string]*string{"user.token": &s.UserToken, "agent.token": &s.AgentToken} {
		b, err := os.ReadFile(filepath.Join(s.Dir, "auth", file))
		if err != nil {
			t.Fatalf("service tokens: %v", err)
		}
		*dst = strings.TrimSpace(string(b))
	}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.proc.Stop(); err != nil {
			t.Logf("stop service: %v", err)
		}
	})
	return s
}

func (s *Service) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.starts > 0 { // keep the earlier run's log
		_ = os.Rename(filepath.Join(s.Dir, "service.log"), filepath.Join(s.Dir, fmt.Sprintf("service.%d.log", s.starts)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := loadtest.StartService(ctx, s.bin, s.Dir, append([]string{"--listen", s.listen}, s.extra...)...)
	if err != nil {
		return err
	}
	s.proc, s.URL = p, p.URL
	s.starts++
	return nil
}

// Kill ends the service with SIGKILL and waits for it to be gone.
func (s *Service) Kill() {
	s.t.Helper()
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		s.t.Fatalf("kill service: %v", err)
	}
	_ = p.Stop() // reaps it
}

// Restart starts the service again on the same address and directory.
func (s *Service) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// Client is a v2 client with the user token.
func (s *Service) Client() *wire.Client {
	s.t.Helper()
	c, err := wire.NewClient(s.URL, wire.WithUserToken(s.UserToken))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// AgentClient is a v2 client with the agent token.
func (s *Service) AgentClient() *wire.Client {
	s.t.Helper()
	c, err := wire.NewClient(s.URL, wire.WithAgentToken(s.AgentToken))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// TokenSecret is the secret a NodezeroControlPlane's
// spec.serviceRef.tokenSecretRef names, holding this service's tokens.
func (s *Service) TokenSecret(namespace, name string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string][]byte{service.UserTokenKey: []byte(s.UserToken), service.AgentTokenKey: []byte(s.AgentToken)},
	}
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// Binary returns the nodezero binary's path: $NODEZERO_BIN, else one built
// for this test process.
func Binary(t testing.TB) string {
	t.Helper()
	if b := os.Getenv("NODEZERO_BIN"); b != "" {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("NODEZERO_BIN: %v", err)
		}
		return b
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nodezero-servicetest-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "nodezero")
		// Built in the main module (the replace directive's folder), with
		// its own go.sum: the capi module lists only what it imports.
		root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/nodezero/nodezero").Output()
		if err != nil {
			buildErr = fmt.Errorf("find the main module: %v", err)
			return
		}
		cmd := exec.Command("go", "build", "-o", builtBin, "./cmd/nodezero")
		cmd.Dir = strings.TrimSpace(string(root))
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build nodezero: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}
