package node_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nodezero/nodezero/internal/pki"
	"github.com/nodezero/nodezero/wire"
)

// Optional TLS for node zero's API: the service serves HTTPS with the
// certificate it is given, clients that trust its CA work, others fail
// on the certificate.

// testCerts writes a CA and a certificate for ip it signs into dir: the
// CA's certificate, the server's and its key (0600), PEM.
func testCerts(t *testing.T, dir string, ip string) (ca, cert, key string) {
	t.Helper()
	c, leaf, k, err := pki.NewServer("nodezero API CA", []netip.Addr{netip.MustParseAddr(ip)}, nil, time.Now(), time.Now().AddDate(1, 0, 0))
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
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{ca, pki.CertPEM(c.Cert), 0o644}, {cert, pki.CertPEM(leaf), 0o644}, {key, keyPEM, 0o600}} {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return ca, cert, key
}

func certError(err error) bool {
	var ce *tls.CertificateVerificationError
	return errors.As(err, &ce)
}

// TestServiceHTTPS: with a certificate the service speaks HTTPS (HTTP/1.1
// only) and serves what it serves over HTTP: JSON, long-polls, a
// multipart upload and a streamed download. A client without the CA, or
// one speaking plain HTTP, is refused; a client that never finishes its
// handshake is cut off.
func TestServiceHTTPS(t *testing.T) {
	t.Parallel()
	ca, cert, key := testCerts(t, t.TempDir(), "127.0.0.1")
	s := startServe(t, slowLimits, cert, key, wire.WithCACertFile(ca))
	ctx := context.Background()

	if err := s.user.Health(ctx); err != nil {
		t.Fatalf("health over HTTPS with the CA: %v", err)
	}
	f := s.fixture(t)
	if _, err := s.agent.NextSteps(ctx, f.infraEnvID, f.hostID, 0, time.Second); err != nil {
		t.Errorf("instructions: %v", err)
	}
	if _, err := s.user.UpdateCluster(ctx, f.clusterID, wire.V2ClusterUpdateParams{Name: ptr("renamed")}); err != nil {
		t.Errorf("update cluster: %v", err)
	}
	bundle := bytes.Repeat([]byte("controller logs\n"), 64<<10)
	if err := s.agent.UploadLogs(ctx, f.clusterID, wire.LogsTarget{Type: wire.LogsTypeController}, "logs.tar.gz", bytes.NewReader(bundle)); err != nil {
		t.Errorf("upload logs: %v", err)
	}
	var got bytes.Buffer
	if err := s.user.DownloadClusterLogs(ctx, f.clusterID, wire.LogsTarget{Type: wire.LogsTypeController}, &got); err != nil {
		t.Errorf("download logs: %v", err)
	} else if !bytes.Equal(got.Bytes(), bundle) {
		t.Errorf("downloaded %d bytes, want the %d uploaded", got.Len(), len(bundle))
	}

	t.Run("http/1.1 only", func(t *testing.T) {
		conf, err := wire.TLSConfig(ca, "", false)
		if err != nil {
			t.Fatal(err)
		}
		tr := &http.Transport{TLSClientConfig: conf, ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(s.url + "/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != 1 || resp.StatusCode != http.StatusOK {
			t.Errorf("a client offering HTTP/2 got %s %d, want HTTP/1.1 200", resp.Proto, resp.StatusCode)
		}
	})
	t.Run("without the CA", func(t *testing.T) {
		c, err := wire.NewClient(s.url, wire.WithUserToken(s.tokens["userAuth"]))
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		if _, err := c.ListClusters(ctx); !certError(err) {
			t.Errorf("ListClusters without the CA = %v, want a certificate verification error", err)
		}
	})
	t.Run("wrong name", func(t *testing.T) {
		c, err := wire.NewClient(s.url, wire.WithCACertFile(ca), wire.WithTLSServerName("192.0.2.1"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		if err := c.Health(ctx); !certError(err) {
			t.Errorf("Health checking the certificate for another address = %v, want a certificate verification error", err)
		}
	})
	t.Run("plain http", func(t *testing.T) {
		resp, err := http.Get("http://" + s.addr + "/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the HTTPS API = %d, want 400", resp.StatusCode)
		}
	})
	t.Run("handshake never finished", func(t *testing.T) {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte{0x16, 0x03, 0x01}); err != nil { // the start of a ClientHello
			t.Fatal(err)
		}
		if err := awaitClose(c); err != nil {
			t.Error(err)
		}
	})
}
