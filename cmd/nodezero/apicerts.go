package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/internal/atomicfile"
)

// apiCerts is what an install directory's tls/ holds for an HTTPS API
// (configimage.LoadAPITLS), PEM.
type apiCerts struct {
	CA, Cert, Key []byte
}

// makeAPICerts makes a CA and a certificate it signs for node zero's API
// at ip, valid from an hour before now for a year. The sandbox serves its
// API with them; a person brings their own (or makes them with openssl).
func makeAPICerts(ip netip.Addr, now time.Time) (apiCerts, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return apiCerts{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return apiCerts{}, err
	}
	serial := func() *big.Int {
		n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)) // crypto/rand does not fail
		return n
	}
	from, until := now.Add(-time.Hour), now.AddDate(1, 0, 0)
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "nodezero API CA"},
		NotBefore: from, NotAfter: until, IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return apiCerts{}, fmt.Errorf("api ca: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return apiCerts{}, err
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "nodezero API " + ip.String()},
		NotBefore: from, NotAfter: until, IPAddresses: []net.IP{ip.AsSlice()},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return apiCerts{}, fmt.Errorf("api certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return apiCerts{}, err
	}
	return apiCerts{
		CA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// apiCAFile is where write puts the CA: what the install directory's
// clients trust.
func apiCAFile(installDir string) string {
	return filepath.Join(installDir, configimage.APITLSDir, configimage.APICAFile)
}

// write puts c into installDir/tls/, the key 0600.
func (c apiCerts) write(installDir string) error {
	dir := filepath.Join(installDir, configimage.APITLSDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{configimage.APICAFile, c.CA, 0o644},
		{configimage.APICertFile, c.Cert, 0o644},
		{configimage.APIKeyFile, c.Key, 0o600},
	} {
		if err := atomicfile.Write(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}
