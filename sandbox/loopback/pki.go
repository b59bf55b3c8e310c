package loopback

import (
	"crypto/tls"
	"fmt"
	"net/netip"
	"time"

	"github.com/nodezero/nodezero/internal/pki"
)

// certLifetime is how long the registry's CA and certificate are valid: a
// sandbox session is hours, never this long.
const certLifetime = 7 * 24 * time.Hour

// serverPKI is a CA made for one registry and the server certificate it
// signed. The CA's key is dropped once the certificate is signed.
type serverPKI struct {
	caPEM []byte
	cert  tls.Certificate
	pair  KeyPair
}

// KeyPair is a TLS registry's CA and server certificate and key, PEM: what
// a sandbox keeps to serve the same registry again (StartRegistryTLSWith).
type KeyPair struct {
	CA, Cert, Key []byte
}

// newServerPKI makes a CA and a server certificate (internal/pki) for ip
// and names (each a DNS name or an IP), valid from an hour before now
// (clock skew) for certLifetime.
func newServerPKI(ip netip.Addr, names []string, now time.Time) (*serverPKI, error) {
	ips := []netip.Addr{ip}
	var dnsNames []string
	for i, n := range names {
		if a, err := netip.ParseAddr(n); err == nil {
			ips = append(ips, a)
			continue
		}
		if _, err := canonicalName(n); err != nil {
			return nil, fmt.Errorf("names[%d]: %w", i, err)
		}
		dnsNames = append(dnsNames, n)
	}
	ca, leaf, key, err := pki.NewServer("nodezero sandbox registry CA", ips, dnsNames, now, now.Add(certLifetime))
	if err != nil {
		return nil, fmt.Errorf("make registry certificate: %w", err)
	}
	keyPEM, err := pki.KeyPEM(key)
	if err != nil {
		return nil, fmt.Errorf("make registry certificate: %w", err)
	}
	caPEM := pki.CertPEM(ca.Cert)
	return &serverPKI{
		caPEM: caPEM,
		cert:  tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf},
		pair:  KeyPair{CA: caPEM, Cert: pki.CertPEM(leaf), Key: keyPEM},
	}, nil
}

// parse is the pair as a serverPKI.
func (p KeyPair) parse() (*serverPKI, error) {
	cert, err := tls.X509KeyPair(p.Cert, p.Key)
	if err != nil {
		return nil, fmt.Errorf("registry certificate: %w", err)
	}
	if _, err := pki.ParseCert(p.CA); err != nil {
		return nil, fmt.Errorf("registry ca: %w", err)
	}
	return &serverPKI{caPEM: p.CA, cert: cert, pair: p}, nil
}
