package configimage

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/onhost"
)

// pki makes certificates for LoadAPITLS's cases.
type pki struct {
	t *testing.T
	n int64
}

type issued struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

func (p *pki) certPEM(cs ...issued) []byte {
	var out []byte
	for _, c := range cs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.der})...)
	}
	return out
}

func (p *pki) keyPEM(c issued) []byte {
	b, err := x509.MarshalPKCS8PrivateKey(c.key)
	if err != nil {
		p.t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b})
}

// issue makes a certificate signed by parent (self-signed when nil): a
// CA, or a server certificate for ips valid from notBefore for a day.
func (p *pki) issue(parent *issued, ca bool, notBefore time.Time, ips ...string) issued {
	p.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	p.n++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.n), Subject: pkix.Name{CommonName: "test"},
		NotBefore: notBefore, NotAfter: notBefore.Add(24 * time.Hour),
	}
	if ca {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
	} else {
		tmpl.KeyUsage, tmpl.ExtKeyUsage = x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, ip := range ips {
			tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
		}
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		p.t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		p.t.Fatal(err)
	}
	return issued{cert: c, der: der, key: key}
}

func TestLoadAPITLS(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	p := &pki{t: t}
	const ip = "192.168.111.80"
	hour := now.Add(-time.Hour)
	root := p.issue(nil, true, hour)
	inter := p.issue(&root, true, hour)
	leaf := p.issue(&root, false, hour, ip)
	viaInter := p.issue(&inter, false, hour, ip)
	selfSigned := p.issue(nil, false, hour, ip)
	otherIP := p.issue(&root, false, hour, "192.168.111.81")
	expired := p.issue(&root, false, now.Add(-48*time.Hour), ip)
	otherRoot := p.issue(nil, true, hour)

	for _, tc := range []struct {
		name          string
		cert, key, ca []byte
		wantCA        []byte // what clients are told to trust; nil: no TLS
		wantErr       string
	}{
		{name: "none: HTTP"},
		{name: "signed by ca.crt", cert: p.certPEM(leaf), key: p.keyPEM(leaf), ca: p.certPEM(root), wantCA: p.certPEM(root)},
		{name: "chain with intermediate", cert: p.certPEM(viaInter, inter), key: p.keyPEM(viaInter), ca: p.certPEM(root), wantCA: p.certPEM(root)},
		{name: "self-signed, no ca.crt", cert: p.certPEM(selfSigned), key: p.keyPEM(selfSigned), wantCA: p.certPEM(selfSigned)},
		{name: "key missing", cert: p.certPEM(leaf), wantErr: "tls/api.key: missing"},
		{name: "certificate missing", key: p.keyPEM(leaf), wantErr: "tls/api.crt: missing"},
		{name: "ca alone", ca: p.certPEM(root), wantErr: "tls/ca.crt: there is no tls/api.crt"},
		{name: "key of another certificate", cert: p.certPEM(leaf), key: p.keyPEM(otherIP), ca: p.certPEM(root), wantErr: "tls/api.crt, tls/api.key: "},
		{name: "for another address", cert: p.certPEM(otherIP), key: p.keyPEM(otherIP), ca: p.certPEM(root), wantErr: "not valid for node zero at the rendezvous IP " + ip},
		{name: "expired", cert: p.certPEM(expired), key: p.keyPEM(expired), ca: p.certPEM(root), wantErr: "expired"},
		{name: "another CA", cert: p.certPEM(leaf), key: p.keyPEM(leaf), ca: p.certPEM(otherRoot), wantErr: "under tls/ca.crt"},
		{name: "ca.crt without a certificate", cert: p.certPEM(leaf), key: p.keyPEM(leaf), ca: []byte("not pem\n"), wantErr: "tls/ca.crt: no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range map[string][]byte{APICertFile: tc.cert, APIKeyFile: tc.key, APICAFile: tc.ca} {
				if data == nil {
					continue
				}
				if err := os.MkdirAll(filepath.Join(dir, APITLSDir), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, APITLSDir, name), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := LoadAPITLS(dir, ip, now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LoadAPITLS() = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadAPITLS() = %v", err)
			}
			if tc.wantCA == nil {
				if got != nil {
					t.Errorf("LoadAPITLS() = %+v, want nil: no files, no TLS", got)
				}
				return
			}
			if got == nil || string(got.Cert) != string(tc.cert) || string(got.Key) != string(tc.key) || string(got.CA) != string(tc.wantCA) {
				t.Errorf("LoadAPITLS() = %+v, want the files and CA %s", got, tc.wantCA)
			}
		})
	}
}

func TestRendezvousEnvHTTPS(t *testing.T) {
	got, err := onhost.ParseEnv("rendezvous-host.env", onhost.RendezvousEnvHTTPS(netip.MustParseAddr("fd2e:6f44:5dd8::50"), "A", "U", onhost.WorkflowInstall))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"SERVICE_BASE_URL":       "https://[fd2e:6f44:5dd8::50]:8090/",
		"AIUI_APP_API_URL":       "https://[fd2e:6f44:5dd8::50]:8090/",
		"IMAGE_SERVICE_BASE_URL": "http://[fd2e:6f44:5dd8::50]:8888/",
		"AIUI_URL":               "http://[fd2e:6f44:5dd8::50]:3001/",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
}
