// Package pki mints the X.509 material nodezero makes itself: a
// self-signed CA, certificates it signs for servers and clients, keys, and
// their PEM forms. The install's signers and admin client certificate
// (configimage/credentials), the sandbox's API and registry certificates,
// the test bed's registry and the local kube-apiserver's serving
// certificate all go through it, so one set of defaults (serials,
// validity, usages, PEM block types) holds everywhere. It imports only the
// standard library.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/netip"
	"time"
)

// Spec is what a certificate says. Zero usages take defaults: a CA may
// sign certificates and CRLs, a leaf signs (DigitalSignature) and serves
// TLS (ServerAuth).
type Spec struct {
	Subject             pkix.Name
	DNSNames            []string
	IPs                 []netip.Addr
	NotBefore, NotAfter time.Time
	KeyUsage            x509.KeyUsage
	ExtKeyUsage         []x509.ExtKeyUsage
	// MaxPathLenZero: a CA that signs leaves only.
	MaxPathLenZero bool
}

// CA is a certificate and the key that signs with it.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewKey returns a fresh ECDSA P-256 key, the default for certificates
// nodezero makes for itself.
func NewKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// Serial is a random certificate serial number in [1, 2^63], as
// openshift-install's. rnd nil is crypto/rand.
func Serial(rnd io.Reader) (*big.Int, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	n, err := rand.Int(rnd, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return nil, fmt.Errorf("certificate serial: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// SelfSign makes a CA certificate for key. rnd nil is crypto/rand.
func SelfSign(rnd io.Reader, key crypto.Signer, s Spec) (*CA, error) {
	if s.KeyUsage == 0 {
		s.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	}
	tmpl, err := template(rnd, s)
	if err != nil {
		return nil, err
	}
	tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.MaxPathLenZero = true, true, s.MaxPathLenZero
	cert, err := create(rnd, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-sign %q: %w", s.Subject.CommonName, err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// Issue signs a certificate for pub. rnd nil is crypto/rand.
func (ca *CA) Issue(rnd io.Reader, pub crypto.PublicKey, s Spec) (*x509.Certificate, error) {
	if s.KeyUsage == 0 {
		s.KeyUsage = x509.KeyUsageDigitalSignature
	}
	if s.ExtKeyUsage == nil {
		s.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	tmpl, err := template(rnd, s)
	if err != nil {
		return nil, err
	}
	cert, err := create(rnd, tmpl, ca.Cert, pub, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("sign %q: %w", s.Subject.CommonName, err)
	}
	return cert, nil
}

// NewServer makes a CA named caName and a certificate it signs for a
// server at ips and dnsNames (the first DNS name, else the first address,
// is its common name), both valid from an hour before now (clock skew) to
// until. It returns the CA (key kept), the server's certificate and key.
func NewServer(caName string, ips []netip.Addr, dnsNames []string, now, until time.Time) (*CA, *x509.Certificate, *ecdsa.PrivateKey, error) {
	caKey, err := NewKey()
	if err != nil {
		return nil, nil, nil, err
	}
	from := now.Add(-time.Hour)
	ca, err := SelfSign(nil, caKey, Spec{Subject: pkix.Name{CommonName: caName}, NotBefore: from, NotAfter: until, MaxPathLenZero: true})
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := NewKey()
	if err != nil {
		return nil, nil, nil, err
	}
	cn := ""
	switch {
	case len(dnsNames) > 0:
		cn = dnsNames[0]
	case len(ips) > 0:
		cn = ips[0].String()
	}
	cert, err := ca.Issue(nil, key.Public(), Spec{Subject: pkix.Name{CommonName: cn}, DNSNames: dnsNames, IPs: ips, NotBefore: from, NotAfter: until})
	if err != nil {
		return nil, nil, nil, err
	}
	return ca, cert, key, nil
}

func template(rnd io.Reader, s Spec) (*x509.Certificate, error) {
	sn, err := Serial(rnd)
	if err != nil {
		return nil, err
	}
	if !s.NotAfter.After(s.NotBefore) {
		return nil, fmt.Errorf("certificate %q: not after %s is not after not before %s", s.Subject.CommonName, s.NotAfter, s.NotBefore)
	}
	t := &x509.Certificate{
		SerialNumber: sn,
		Subject:      s.Subject,
		NotBefore:    s.NotBefore,
		NotAfter:     s.NotAfter,
		KeyUsage:     s.KeyUsage,
		ExtKeyUsage:  s.ExtKeyUsage,
		DNSNames:     s.DNSNames,
	}
	for _, a := range s.IPs {
		t.IPAddresses = append(t.IPAddresses, net.IP(a.AsSlice()))
	}
	return t, nil
}

func create(rnd io.Reader, tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) (*x509.Certificate, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	der, err := x509.CreateCertificate(rnd, tmpl, parent, pub, signer)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// CertPEM is certs as PEM CERTIFICATE blocks, in order (a chain).
func CertPEM(certs ...*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}

// KeyPEM is k in PEM: an RSA key as PKCS #1 ("RSA PRIVATE KEY", what
// openshift-install writes), an ECDSA key as SEC 1 ("EC PRIVATE KEY"),
// anything else as PKCS #8.
func KeyPEM(k crypto.Signer) ([]byte, error) {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParseCert reads the first certificate of a PEM bundle.
func ParseCert(p []byte) (*x509.Certificate, error) {
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

// ParseKey reads a PEM private key: PKCS #1 RSA, SEC 1 EC or PKCS #8.
func ParseKey(p []byte) (crypto.Signer, error) {
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
