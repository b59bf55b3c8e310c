package sandbox

import (
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/internal/pki"
)

// APICerts is what an install directory's tls/ holds for an HTTPS API
// (configimage.LoadAPITLS), PEM.
type APICerts struct {
	CA, Cert, Key []byte
}

// MakeAPICerts makes a CA and a certificate it signs for node zero's API
// at ip, valid from an hour before now for a year. The sandbox serves its
// API with them; a person brings their own (or makes them with openssl).
func MakeAPICerts(ip netip.Addr, now time.Time) (APICerts, error) {
	ca, cert, key, err := pki.NewServer("nodezero API CA", []netip.Addr{ip}, nil, now, now.AddDate(1, 0, 0))
	if err != nil {
		return APICerts{}, err
	}
	keyPEM, err := pki.KeyPEM(key)
	if err != nil {
		return APICerts{}, err
	}
	return APICerts{CA: pki.CertPEM(ca.Cert), Cert: pki.CertPEM(cert), Key: keyPEM}, nil
}

// APICAFile is where Write puts the CA: what the install directory's
// clients trust.
func APICAFile(installDir string) string {
	return filepath.Join(installDir, configimage.APITLSDir, configimage.APICAFile)
}

// Write puts c into installDir/tls/, the key 0600.
func (c APICerts) Write(installDir string) error {
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
