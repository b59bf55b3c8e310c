package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/node"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sandbox"
	"github.com/nodezero/nodezero/watch"
	"github.com/nodezero/nodezero/wire"
)

// Optional TLS for node zero's API, through the commands: the config
// image carries the files from the install directory to node zero, which
// serves with them; wait-for and the sandbox speak HTTPS to it. (The
// service's own HTTPS: node's TestServiceHTTPS and daemon/api's server
// tests.)

// testCerts writes a CA and a certificate for ip into dir/tls/.
func testCerts(t *testing.T, dir string, ip string) (ca, cert, key string) {
	t.Helper()
	c, err := sandbox.MakeAPICerts(netip.MustParseAddr(ip), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(dir); err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(dir, configimage.APITLSDir)
	return filepath.Join(d, configimage.APICAFile), filepath.Join(d, configimage.APICertFile), filepath.Join(d, configimage.APIKeyFile)
}

func certError(err error) bool {
	var ce *tls.CertificateVerificationError
	return errors.As(err, &ce)
}

// TestConfigImageAPITLS is the chain: tls/ in the install directory, the
// config image made from it (the key 0600, SERVICE_BASE_URL https://),
// loaded into node zero's root, read back as the boot sequence does, and
// node zero's service serving HTTPS with the carried certificate to a
// client that trusts the carried CA and checks the rendezvous IP.
func TestConfigImageAPITLS(t *testing.T) {
	t.Parallel()
	// nz.Serve tunes the GC for node zero; the test binary gets its own
	// settings back.
	gc, mem := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(gc)
	t.Cleanup(func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(mem)
	})
	dir := filepath.Join(t.TempDir(), "install")
	copyDir(t, filepath.Join("..", "..", "configimage", "inputs", "testdata", "sno"), dir)
	const rendezvous = "192.168.111.80" // sno's agent-config.yaml
	testCerts(t, dir, rendezvous)
	var out bytes.Buffer
	if err := runCreateConfigImage(context.Background(), []string{"--dir", dir}, &out, &out); err != nil {
		t.Fatalf("create config-image: %v\n%s", err, out.String())
	}
	img, err := os.ReadFile(filepath.Join(dir, "agentconfig.noarch.iso"))
	if err != nil {
		t.Fatal(err)
	}
	members, err := configimage.Read(bytes.NewReader(img), int64(len(img)), configimage.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]fs.FileMode{}
	for _, m := range members {
		modes[m.Path] = m.Mode
	}
	for path, want := range map[string]fs.FileMode{configimage.APICertPath: 0o644, configimage.APIKeyPath: 0o600, configimage.APICAPath: 0o644} {
		if got, ok := modes[path]; !ok || got != want {
			t.Errorf("config image member %s: mode %v (present %v), want %v", path, got, ok, want)
		}
	}

	root := t.TempDir()
	if _, err := configimage.Load(bytes.NewReader(img), int64(len(img)), root, configimage.Limits{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, configimage.APIKeyPath)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key on the host: %v %v, want mode 0600", fi, err)
	}
	env, err := boot.ReadEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://" + rendezvous + ":8090/"; env.ServiceBaseURL != want {
		t.Errorf("SERVICE_BASE_URL = %q, want %q", env.ServiceBaseURL, want)
	}
	if want := filepath.Join(root, configimage.APICAPath); env.ServiceCACert != want {
		t.Errorf("ServiceCACert = %q, want %q", env.ServiceCACert, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	nz := &node.NodeZero{Root: root, Listen: "127.0.0.1:0", DataDir: t.TempDir(), Payload: t.TempDir(),
		DisconnectionTimeout: time.Minute, CheckInterval: time.Minute, Status: func(string) {}, Logger: slog.New(slog.DiscardHandler)}
	local, served, err := nz.Serve(ctx, env)
	if err != nil {
		cancel()
		t.Fatalf("node zero's service: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("service: %v", err)
		}
	})
	defer local.CloseIdleConnections()
	if !strings.HasPrefix(local.BaseURL(), "https://") {
		t.Errorf("node zero's own client uses %s, want https://", local.BaseURL())
	}
	if _, err := local.ListClusters(ctx); err != nil {
		t.Errorf("node zero's own client: %v", err)
	}
	// Another host: the carried CA, the certificate checked for the
	// rendezvous IP (reached here over loopback).
	peer, err := wire.NewClient(local.BaseURL(), wire.WithUserToken(env.UserToken), wire.WithCACertFile(env.ServiceCACert), wire.WithTLSServerName(env.NodeZeroIP.String()))
	if err != nil {
		t.Fatal(err)
	}
	defer peer.CloseIdleConnections()
	if _, err := peer.ListInfraEnvs(ctx, ""); err != nil {
		t.Errorf("a host trusting the carried CA: %v", err)
	}
	stranger, err := wire.NewClient(local.BaseURL(), wire.WithUserToken(env.UserToken), wire.WithTLSServerName(env.NodeZeroIP.String()))
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.CloseIdleConnections()
	if _, err := stranger.ListInfraEnvs(ctx, ""); !certError(err) {
		t.Errorf("a client without the CA = %v, want a certificate verification error", err)
	}
}

// TestConfigImageAPITLSRefused: certificates the config image must not
// carry stop `create config-image` with the file named.
func TestConfigImageAPITLSRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"for another address", func(t *testing.T, dir string) { testCerts(t, dir, "192.0.2.99") }, "tls/api.crt: not valid for node zero at the rendezvous IP 192.168.111.80"},
		{"key missing", func(t *testing.T, dir string) {
			testCerts(t, dir, "192.168.111.80")
			os.Remove(filepath.Join(dir, "tls", "api.key"))
		}, "tls/api.key: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "install")
			copyDir(t, filepath.Join("..", "..", "configimage", "inputs", "testdata", "sno"), dir)
			tc.setup(t, dir)
			var out bytes.Buffer
			err := runCreateConfigImage(context.Background(), []string{"--dir", dir}, &out, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("create config-image = %v, want an error with %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "agentconfig.noarch.iso")); err == nil {
				t.Error("a config image was written anyway")
			}
		})
	}
}

// serveTLS runs node zero's service (node.Serve) over HTTPS with cert and
// key on 127.0.0.1 until the test ends, and returns its URL.
func serveTLS(t *testing.T, cert, key string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m, _, err := auth.LoadOrCreate(filepath.Join(t.TempDir(), "auth"))
	if err != nil {
		t.Fatal(err)
	}
	listening := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- node.Serve(ctx, node.ServiceConfig{
			Dir: t.TempDir(), Listen: "127.0.0.1:0", PublicKeyPEM: m.PublicKeyPEM, Logger: slog.New(slog.DiscardHandler),
			MonitorInterval: -1, Limits: api.Limits{MaxWait: time.Second}, TLSCertFile: cert, TLSKeyFile: key,
			Listening: func(a net.Addr) { listening <- a },
		})
	}()
	select {
	case err := <-served:
		cancel()
		t.Fatalf("serve: %v", err)
	case a := <-listening:
		t.Cleanup(func() {
			cancel()
			if err := <-served; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		return "https://" + a.String()
	}
	return ""
}

// TestWaitForHTTPS: wait-for reaches an HTTPS node zero with --cacert,
// and without it stops at once, saying to give it. A token of another
// install makes the service answer (401) without any install to follow.
func TestWaitForHTTPS(t *testing.T) {
	t.Parallel()
	ca, cert, key := testCerts(t, t.TempDir(), "127.0.0.1")
	url := serveTLS(t, cert, key)
	otherKey, err := auth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := auth.Sign(otherKey, auth.Watcher, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"bootstrap-complete", "--url", url, "--interval", "5ms", "--token", foreign}

	out, done := wfRunWait(t, append(args, "--cacert", ca)...)
	if err := wfResult(t, done, out); !errors.Is(err, watch.ErrRefused) {
		t.Errorf("wait-for with --cacert = %v, want node zero's answer: the token refused", err)
	}
	out, done = wfRunWait(t, args...)
	if err := wfResult(t, done, out); !errors.Is(err, watch.ErrUntrusted) || !strings.Contains(err.Error(), "--cacert") {
		t.Errorf("wait-for without --cacert = %v, want errUntrusted naming --cacert", err)
	}
}

// TestSandboxHTTPS runs a single-node sandbox install with --api-tls: the
// whole chain, from the install directory's tls/ through the config image
// to node zero's service, every host's agent and installer, and the
// installed host's reports, over HTTPS.
func TestSandboxHTTPS(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a sandbox install")
	}
	dir := t.TempDir()
	sum, out, err := runSandboxBinary(t, dir, "--masters", "1", "--workers", "0", "--api-tls")
	if err != nil || sum.Status != wire.ClusterStatusInstalled {
		t.Fatalf("sandbox --api-tls: %v, cluster %s (%s)\n%s", err, sum.Status, sum.StatusInfo, out)
	}
	if !strings.HasPrefix(sum.URL, "https://") {
		t.Errorf("sandbox API %s, want https://", sum.URL)
	}
	for _, h := range sum.Hosts {
		if h.Status != wire.HostStatusInstalled {
			t.Errorf("%s: %s (%s)", h.Name, h.Status, h.StatusInfo)
		}
		rv := readEnv(t, filepath.Join(h.Root, onhost.RendezvousEnvPath))
		if !strings.HasPrefix(rv["SERVICE_BASE_URL"], "https://") {
			t.Errorf("%s: SERVICE_BASE_URL %q, want https://", h.Name, rv["SERVICE_BASE_URL"])
		}
		if fi, err := os.Stat(filepath.Join(h.Root, configimage.APIKeyPath)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: API key %v %v, want mode 0600", h.Name, fi, err)
		}
	}
}
