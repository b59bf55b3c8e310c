package configimage

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"
)

// Optional TLS for node zero's API. ABI serves it over plain HTTP and
// starts its agents with --insecure=true; assisted-service itself can
// serve HTTPS (SERVE_HTTPS, HTTPS_CERT_FILE, HTTPS_KEY_FILE) and its agent
// trusts a CA given with --cacert. nodezero does the same from files the
// user puts in the install directory:
//
//	<dir>/tls/api.crt  the API's certificate, PEM, leaf first, then any
//	                   intermediates; valid for the rendezvous IP
//	<dir>/tls/api.key  its private key, PEM
//	<dir>/tls/ca.crt   optional: the CA the clients trust; without it
//	                   they trust api.crt's certificates themselves
//
// The config image carries them to every host under APITLSHostDir (the key
// 0600), and rendezvous-host.env's SERVICE_BASE_URL becomes https://.
// Without the files nothing changes: HTTP, as ABI.
const (
	APITLSDir   = "tls" // in the install directory
	APICertFile = "api.crt"
	APIKeyFile  = "api.key"
	APICAFile   = "ca.crt"
)

// On-host paths of the API's TLS files.
const (
	APITLSHostDir = "/etc/assisted/tls"
	APICertPath   = APITLSHostDir + "/" + APICertFile
	APIKeyPath    = APITLSHostDir + "/" + APIKeyFile
	APICAPath     = APITLSHostDir + "/" + APICAFile
)

// APITLS is the API's TLS material, checked.
type APITLS struct {
	Cert []byte // PEM: the leaf, then any intermediates
	Key  []byte // PEM
	CA   []byte // PEM: what clients trust (ca.crt, else Cert)
}

// LoadAPITLS reads dir/tls/. With neither api.crt nor api.key it returns
// nil: the API stays HTTP. Otherwise both must be there and match, and the
// certificate must be valid at now for a server at rendezvousIP (checked
// when not empty) under the CA the clients will trust. Errors name the
// file, relative to dir.
func LoadAPITLS(dir, rendezvousIP string, now time.Time) (*APITLS, error) {
	rel := func(name string) string { return path.Join(APITLSDir, name) }
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, APITLSDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel(name), err)
		}
		return b, nil
	}
	cert, err := read(APICertFile)
	if err != nil {
		return nil, err
	}
	key, err := read(APIKeyFile)
	if err != nil {
		return nil, err
	}
	ca, err := read(APICAFile)
	if err != nil {
		return nil, err
	}
	switch {
	case cert == nil && key == nil && ca == nil:
		return nil, nil
	case cert == nil && key == nil:
		return nil, fmt.Errorf("%s: there is no %s and %s for it to vouch for: add them for an HTTPS API, or remove it", rel(APICAFile), rel(APICertFile), rel(APIKeyFile))
	case cert == nil:
		return nil, fmt.Errorf("%s: missing: %s needs its certificate", rel(APICertFile), rel(APIKeyFile))
	case key == nil:
		return nil, fmt.Errorf("%s: missing: %s needs its private key", rel(APIKeyFile), rel(APICertFile))
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("%s, %s: %w", rel(APICertFile), rel(APIKeyFile), err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel(APICertFile), err)
	}
	opts := x509.VerifyOptions{
		DNSName: rendezvousIP, CurrentTime: now,
		Intermediates: x509.NewCertPool(), Roots: x509.NewCertPool(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, der := range pair.Certificate[1:] {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel(APICertFile), err)
		}
		opts.Intermediates.AddCert(c)
	}
	trusted, from := certsOnly(ca), rel(APICAFile)
	if ca == nil {
		trusted, from = certsOnly(cert), rel(APICertFile)
	}
	if !opts.Roots.AppendCertsFromPEM(trusted) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", from)
	}
	if _, err := leaf.Verify(opts); err != nil {
		what := "a server"
		if rendezvousIP != "" {
			what = "node zero at the rendezvous IP " + rendezvousIP
		}
		return nil, fmt.Errorf("%s: not valid for %s under %s: %w", rel(APICertFile), what, from, err)
	}
	return &APITLS{Cert: cert, Key: key, CA: trusted}, nil
}

// certsOnly keeps the CERTIFICATE blocks of a PEM file: what clients are
// given to trust never holds anything else, whatever api.crt also holds.
func certsOnly(b []byte) []byte {
	var out []byte
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		if blk.Type == "CERTIFICATE" {
			out = append(out, pem.EncodeToMemory(blk)...)
		}
	}
}

// members are the files the config image carries for t.
func (t *APITLS) members() []Member {
	return []Member{
		{Path: APICertPath, Mode: 0o644, Data: t.Cert},
		{Path: APIKeyPath, Mode: 0o600, Data: t.Key},
		{Path: APICAPath, Mode: 0o644, Data: t.CA},
	}
}
