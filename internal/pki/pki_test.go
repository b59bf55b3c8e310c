package pki

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// TestServerHandshake: a client that trusts only the CA reaches a server
// using the certificate, by address and by name; the key round-trips
// through PEM.
func TestServerHandshake(t *testing.T) {
	now := time.Now()
	ip := netip.MustParseAddr("127.0.0.1")
	ca, cert, key, err := NewServer("test CA", []netip.Addr{ip}, []string{"api.example.test"}, now, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := KeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(CertPEM(cert, ca.Cert), keyPEM)
	if err != nil {
		t.Fatalf("X509KeyPair of the PEM forms: %v", err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Listener.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	defer srv.Close()

	roots := x509.NewCertPool()
	caBack, err := ParseCert(CertPEM(ca.Cert))
	if err != nil {
		t.Fatal(err)
	}
	roots.AddCert(caBack)
	for _, name := range []string{"", "api.example.test"} {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: name}}}
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatalf("server name %q: %v", name, err)
		}
		resp.Body.Close()
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "other.example.test"}}}
	if resp, err := c.Get(srv.URL); err == nil {
		resp.Body.Close()
		t.Fatal("a name the certificate does not hold was accepted")
	}
	if !ca.Cert.IsCA || !ca.Cert.MaxPathLenZero || ca.Cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("CA: IsCA %v, MaxPathLenZero %v, key usage %v", ca.Cert.IsCA, ca.Cert.MaxPathLenZero, ca.Cert.KeyUsage)
	}
	if !cert.NotBefore.Before(now) {
		t.Errorf("not before %s, want before now (clock skew)", cert.NotBefore)
	}
}

func TestKeyPEMRoundTrip(t *testing.T) {
	ec, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	r, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, block string
		key         crypto.Signer
	}{
		{"ecdsa", "EC PRIVATE KEY", ec},
		{"rsa", "RSA PRIVATE KEY", r},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := KeyPEM(tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if blk, _ := pem.Decode(p); blk == nil || blk.Type != tc.block {
				t.Fatalf("PEM block %v, want %q", blk, tc.block)
			}
			back, err := ParseKey(p)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !back.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(tc.key.Public()) {
				t.Error("parsed key differs")
			}
		})
	}
}

func TestClientCertificate(t *testing.T) {
	now := time.Now()
	caKey, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := SelfSign(nil, caKey, Spec{Subject: pkix.Name{CommonName: "signer"}, NotBefore: now, NotAfter: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue(nil, k.Public(), Spec{
		Subject:   pkix.Name{CommonName: "system:admin", Organization: []string{"system:masters"}},
		NotBefore: now, NotAfter: now.Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not verify for client auth: %v", err)
	}
	if _, err := ca.Issue(nil, k.Public(), Spec{NotBefore: now, NotAfter: now}); err == nil {
		t.Error("a certificate ending when it starts was issued")
	}
}
