package api_test

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/internal/pki"
)

// TestServiceLimitsDefaults: a zero Limits is node zero's, and a write
// timeout that a long-poll would outlast is refused.
func TestServiceLimitsDefaults(t *testing.T) {
	got, err := api.Limits{}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := api.DefaultLimits
	want.WriteTimeout = 90 * time.Second
	if got != want {
		t.Errorf("WithDefaults() = %+v, want %+v", got, want)
	}
	if _, err := (api.Limits{MaxWait: time.Minute, WriteTimeout: time.Minute}).WithDefaults(); err == nil {
		t.Error("write timeout equal to the longest wait: no error")
	}
}

// serverCerts writes a CA and a certificate for 127.0.0.1 it signs into
// dir: the CA's certificate, the server's and its key, PEM.
func serverCerts(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	c, leaf, k, err := pki.NewServer("api test CA", []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil, time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := pki.KeyPEM(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ca, cert, key = filepath.Join(dir, "ca.crt"), filepath.Join(dir, "api.crt"), filepath.Join(dir, "api.key")
	for path, b := range map[string][]byte{ca: pki.CertPEM(c.Cert), cert: pki.CertPEM(leaf), key: keyPEM} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca, cert, key
}

// TestServiceTLSFiles: a key without its certificate, or a pair that
// does not match, stops the service before it listens, naming the files.
func TestServiceTLSFiles(t *testing.T) {
	dir := t.TempDir()
	_, cert, _ := serverCerts(t, filepath.Join(dir, "a"))
	_, _, otherKey := serverCerts(t, filepath.Join(dir, "b"))
	for name, files := range map[string][2]string{
		"key missing":      {cert, ""},
		"key of another":   {cert, otherKey},
		"no such key file": {cert, filepath.Join(dir, "missing.key")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := api.ServerTLS(files[0], files[1])
			if err == nil {
				t.Fatal("no error")
			}
			if files[1] != "" && !strings.Contains(err.Error(), files[1]) {
				t.Errorf("error %q does not name the key file", err)
			}
		})
	}
}

// TestServerTLSAndShutdown: Serve speaks HTTPS with ServerTLS's
// configuration, HTTP/1.1 only, to a client that trusts the CA, and
// returns nil once its context ends.
func TestServerTLSAndShutdown(t *testing.T) {
	ca, cert, key := serverCerts(t, t.TempDir())
	conf, err := api.ServerTLS(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lim, err := api.Limits{}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() {
		served <- api.Serve(ctx, ln, api.ServerConfig{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }),
			Limits:  lim, TLS: conf, Logger: slog.New(slog.DiscardHandler),
		})
	}()
	caPEM, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	tr := &http.Transport{ForceAttemptHTTP2: true}
	tr.TLSClientConfig = conf.Clone()
	tr.TLSClientConfig.Certificates, tr.TLSClientConfig.RootCAs = nil, pool
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("https://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 1 || string(body) != "ok" {
		t.Errorf("GET over HTTPS offering HTTP/2 = %s %q, want HTTP/1.1 %q", resp.Proto, body, "ok")
	}
	cancel()
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve after its context ended = %v, want nil", err)
	}
}
