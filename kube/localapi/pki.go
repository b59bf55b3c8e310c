package localapi

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"time"
)

// parseCert reads the first certificate of a PEM bundle.
func parseCert(p []byte) (*x509.Certificate, error) {
	for {
		var blk *pem.Block
		blk, p = pem.Decode(p)
		if blk == nil {
			return nil, errors.New("no PEM certificate")
		}
		if blk.Type == "CERTIFICATE" {
			return x509.ParseCertificate(blk.Bytes)
		}
	}
}

// parseKey reads a PEM private key: PKCS #1 RSA, SEC 1 EC or PKCS #8.
func parseKey(p []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(p)
	if blk == nil {
		return nil, errors.New("no PEM private key")
	}
	switch blk.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(blk.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			return nil, err
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("a %T private key cannot sign", k)
		}
		return s, nil
	}
	return nil, fmt.Errorf("PEM block %q is not a private key", blk.Type)
}

// servingCert issues the API's serving certificate with the signer: the
// names and the address as SANs, valid from an hour ago for a year. It
// returns the certificate followed by the signer's (the chain), and the
// key, PEM.
func servingCert(signerCertPEM, signerKeyPEM []byte, names []string, addr netip.Addr, now time.Time) (chain, key []byte, err error) {
	ca, err := parseCert(signerCertPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("serving signer certificate: %w", err)
	}
	caKey, err := parseKey(signerKeyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("serving signer key: %w", err)
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	cn := addr.String()
	if len(names) > 0 {
		cn = names[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     names,
		IPAddresses:  []net.IP{addr.AsSlice()},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("sign the serving certificate: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, nil, err
	}
	chain = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})...)
	return chain, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// serviceAccountKey makes the key the API signs service-account tokens with.
func serviceAccountKey() ([]byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}
