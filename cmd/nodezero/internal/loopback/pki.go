package loopback

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// certLifetime is how long the registry's CA and certificate are valid: a
// sandbox session is hours, never this long.
const certLifetime = 7 * 24 * time.Hour

// serverPKI is a CA made for one registry and the server certificate it
// signed. The CA's key is dropped once the certificate is signed.
type serverPKI struct {
	caPEM []byte
	cert  tls.Certificate
}

// newServerPKI makes an ECDSA P-256 CA and a server certificate for ip and
// names (each a DNS name or an IP), valid from an hour before now (clock
// skew) for certLifetime.
func newServerPKI(ip netip.Addr, names []string, now time.Time) (*serverPKI, error) {
	ips := []net.IP{ip.AsSlice()}
	var dnsNames []string
	for i, n := range names {
		if a, err := netip.ParseAddr(n); err == nil {
			ips = append(ips, a.AsSlice())
			continue
		}
		if _, err := canonicalName(n); err != nil {
			return nil, fmt.Errorf("names[%d]: %w", i, err)
		}
		dnsNames = append(dnsNames, n)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make registry ca: %w", err)
	}
	notBefore, notAfter := now.Add(-time.Hour), now.Add(certLifetime)
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "nodezero sandbox registry CA"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	// Serial numbers are left to CreateCertificate, which picks random ones.
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("make registry ca: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("make registry ca: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make registry certificate: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "nodezero sandbox registry"},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    dnsNames,
		IPAddresses: ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("make registry certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("make registry certificate: %w", err)
	}
	return &serverPKI{
		caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert:  tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
	}, nil
}
