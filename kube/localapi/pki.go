package localapi

import (
	"crypto/x509/pkix"
	"fmt"
	"net/netip"
	"time"

	"github.com/nodezero/nodezero/internal/pki"
)

// servingCert issues the API's serving certificate with the signer: the
// names and the address as SANs, valid from an hour ago for a year. It
// returns the certificate followed by the signer's (the chain), and the
// key, PEM.
func servingCert(signerCertPEM, signerKeyPEM []byte, names []string, addr netip.Addr, now time.Time) (chain, key []byte, err error) {
	caCert, err := pki.ParseCert(signerCertPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("serving signer certificate: %w", err)
	}
	caKey, err := pki.ParseKey(signerKeyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("serving signer key: %w", err)
	}
	k, err := pki.NewKey()
	if err != nil {
		return nil, nil, err
	}
	cn := addr.String()
	if len(names) > 0 {
		cn = names[0]
	}
	ca := &pki.CA{Cert: caCert, Key: caKey}
	cert, err := ca.Issue(nil, k.Public(), pki.Spec{
		Subject:   pkix.Name{CommonName: cn},
		DNSNames:  names,
		IPs:       []netip.Addr{addr},
		NotBefore: now.Add(-time.Hour),
		NotAfter:  now.Add(365 * 24 * time.Hour),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("sign the serving certificate: %w", err)
	}
	key, err = pki.KeyPEM(k)
	if err != nil {
		return nil, nil, err
	}
	return pki.CertPEM(cert, caCert), key, nil
}

// serviceAccountKey makes the key the API signs service-account tokens with.
func serviceAccountKey() ([]byte, error) {
	k, err := pki.NewKey()
	if err != nil {
		return nil, err
	}
	return pki.KeyPEM(k)
}
