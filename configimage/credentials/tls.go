package credentials

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/internal/pki"
	"golang.org/x/crypto/bcrypt"
)

// The /opt/agent/tls directory is one format with two readers: node zero's
// assisted service, which copies every regular file of it into the
// installer's tls/ directory (EPHEMERAL_INSTALLER_CLUSTER_TLS_CERTS_OVERRIDE_DIR,
// docs/reference/abi-on-host.md), and openshift-install, which under
// OPENSHIFT_INSTALL_LOAD_CLUSTER_CERTS=true loads each signer from
// tls/<name>.crt and tls/<name>.key instead of minting it, and the
// kubeadmin password from tls/kubeadmin-password.hash (and the plain
// password from tls/kubeadmin-password when that file is there; without
// it, it writes an empty auth/kubeadmin-password). This file owns the
// format: its names, how it is parsed and checked, and what is derived
// from it (the admin kubeconfig's CA bundle, the admin client certificate).

// The directory's files besides the signers' <name>.crt and <name>.key.
const (
	PasswordHashFile = "kubeadmin-password.hash"
	// PasswordFile holds the kubeadmin password itself. openshift-install's
	// agent assets write it next to the hash in the user's tls/ directory
	// but leave it out of their config image, so that node zero's
	// assisted-service serves an empty password. nodezero ships it (see
	// State.TLSFiles): the image already carries the admin-kubeconfig-signer
	// key, which mints system:masters certificates and so is strictly more
	// than the password. With it, openshift-install (it reads this very
	// name) and the built-in generator both write the user's password as
	// the cluster's kubeadmin-password, and GET /v2/clusters/{id}/credentials
	// answers with it.
	PasswordFile = "kubeadmin-password"
)

// AdminSigner signs the admin client certificate; the kube-apiserver
// signers (Signers[1:]) are the CA bundle a kubeconfig trusts for the API.
const AdminSigner = "admin-kubeconfig-signer"

// maxTLSFile bounds one file of the directory: a PEM key or certificate is
// a few KB.
const maxTLSFile = 1 << 20

// TLS is an /opt/agent/tls directory, parsed and checked: the four signers
// and the kubeadmin password hash, with the password when the directory
// carries it.
type TLS struct {
	Signers      map[string]*Signer // by name (Signers)
	PasswordHash []byte             // bcrypt
	Password     string             // "" when the directory carries only the hash
}

// Signer is one CA of the directory. Its key is RSA, as openshift-install
// makes and loads them.
type Signer struct {
	Cert    *x509.Certificate
	Key     *rsa.PrivateKey
	CertPEM []byte
	KeyPEM  []byte
}

// NewTLS mints a fresh directory's worth: the four RSA 2048 signers
// (openshift-install's legacy PKI, which its agent flow uses), a kubeadmin
// password in openshift-install's form and its bcrypt hash. rnd feeds the
// password and serial numbers (nil: crypto/rand); Go draws private keys
// from the system's generator whatever reader it is given.
func NewTLS(rnd io.Reader, now time.Time) (*TLS, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	t := &TLS{Signers: map[string]*Signer{}}
	var err error
	if t.Password, err = password(rnd); err != nil {
		return nil, err
	}
	if t.PasswordHash, err = bcrypt.GenerateFromPassword([]byte(t.Password), bcrypt.DefaultCost); err != nil {
		return nil, fmt.Errorf("hash kubeadmin password: %w", err)
	}
	for _, name := range Signers {
		key, err := rsa.GenerateKey(rnd, 2048)
		if err != nil {
			return nil, fmt.Errorf("generate %s key: %w", name, err)
		}
		ca, err := pki.SelfSign(rnd, key, pki.Spec{
			Subject:   pkix.Name{CommonName: name, OrganizationalUnit: []string{"openshift"}},
			NotBefore: now.UTC(),
			NotAfter:  now.UTC().Add(validity),
			KeyUsage:  x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		})
		if err != nil {
			return nil, err
		}
		keyPEM, err := pki.KeyPEM(key)
		if err != nil {
			return nil, err
		}
		t.Signers[name] = &Signer{Cert: ca.Cert, Key: key, CertPEM: pki.CertPEM(ca.Cert), KeyPEM: keyPEM}
	}
	return t, nil
}

// Files are the directory's files by name: each signer's .crt and .key,
// the hash, and the password when there is one.
func (t *TLS) Files() map[string][]byte {
	out := map[string][]byte{PasswordHashFile: t.PasswordHash}
	if t.Password != "" {
		out[PasswordFile] = []byte(t.Password)
	}
	for _, n := range Signers {
		out[n+".crt"] = t.Signers[n].CertPEM
		out[n+".key"] = t.Signers[n].KeyPEM
	}
	return out
}

// ReadTLSDir reads every regular file of dir, as assisted-service copies
// them for openshift-install (other entries are skipped), and parses them
// with ParseTLS. It returns the files by name too.
func ReadTLSDir(dir string) (*TLS, map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster TLS directory: %w", err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := readLimited(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, nil, fmt.Errorf("cluster TLS directory: %w", err)
		}
		files[e.Name()] = b
	}
	t, err := ParseTLS(dir, files)
	if err != nil {
		return nil, nil, err
	}
	return t, files, nil
}

func readLimited(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTLSFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxTLSFile {
		return nil, fmt.Errorf("%s: larger than %d bytes, not a key or certificate", name, maxTLSFile)
	}
	return b, nil
}

// ParseTLS checks the files of an /opt/agent/tls directory, by name, and
// returns every problem found, each naming its file under dir: each
// signer's certificate must be a CA and its key the RSA key of that
// certificate; the hash must be bcrypt; a password file, when there is
// one, must match the hash. Files it does not know are left to whoever
// reads them (openshift-install loads the names it knows).
func ParseTLS(dir string, files map[string][]byte) (*TLS, error) {
	t := &TLS{Signers: map[string]*Signer{}}
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", filepath.Join(dir, name), fmt.Sprintf(format, args...)))
	}
	for _, n := range Signers {
		s, fe := parseSigner(n, files[n+".crt"], files[n+".key"])
		if fe != nil {
			bad(fe.name, "%s", fe.problem)
			continue
		}
		t.Signers[n] = s
	}
	t.PasswordHash = files[PasswordHashFile]
	switch {
	case t.PasswordHash == nil:
		bad(PasswordHashFile, "missing: the kubeadmin password's hash is what the cluster's kubeadmin secret carries")
	default:
		if _, err := bcrypt.Cost(t.PasswordHash); err != nil {
			bad(PasswordHashFile, "not a bcrypt hash: %v", err)
		} else if pw, ok := files[PasswordFile]; ok {
			if bcrypt.CompareHashAndPassword(t.PasswordHash, pw) != nil {
				bad(PasswordFile, "does not match %s", PasswordHashFile)
			} else {
				t.Password = string(pw)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return t, nil
}

// fileError is one problem of one file of the directory.
type fileError struct{ name, problem string }

func parseSigner(name string, certPEM, keyPEM []byte) (*Signer, *fileError) {
	crt, key := name+".crt", name+".key"
	if certPEM == nil {
		return nil, &fileError{crt, "missing: the " + name + " certificate"}
	}
	if keyPEM == nil {
		return nil, &fileError{key, "missing: the " + name + " private key"}
	}
	blk, _ := pem.Decode(certPEM)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, &fileError{crt, "no PEM CERTIFICATE block"}
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, &fileError{crt, err.Error()}
	}
	if !cert.IsCA {
		return nil, &fileError{crt, "not a CA certificate (basic constraints CA:FALSE)"}
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, &fileError{key, "no PEM block"}
	}
	var rk *rsa.PrivateKey
	switch kb.Type {
	case "RSA PRIVATE KEY":
		rk, err = x509.ParsePKCS1PrivateKey(kb.Bytes)
	case "PRIVATE KEY":
		var k any
		if k, err = x509.ParsePKCS8PrivateKey(kb.Bytes); err == nil {
			var ok bool
			if rk, ok = k.(*rsa.PrivateKey); !ok {
				err = fmt.Errorf("a %T, want an RSA key as openshift-install's signers are", k)
			}
		}
	default:
		err = fmt.Errorf("a PEM %q block, want an RSA key (RSA PRIVATE KEY or PRIVATE KEY) as openshift-install's signers are", kb.Type)
	}
	if err != nil {
		return nil, &fileError{key, err.Error()}
	}
	if pub, ok := cert.PublicKey.(*rsa.PublicKey); !ok || !pub.Equal(&rk.PublicKey) {
		return nil, &fileError{key, "not the key of " + crt}
	}
	return &Signer{Cert: cert, Key: rk, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// CABundle is what the admin kubeconfig trusts for the API server: the
// three kube-apiserver signers, in Signers order (openshift-install's
// kube-apiserver complete server CA bundle).
func (t *TLS) CABundle() []byte {
	var b bytes.Buffer
	for _, n := range Signers[1:] {
		b.Write(t.Signers[n].CertPEM)
	}
	return b.Bytes()
}

// IssueAdminClient makes a system:admin client certificate in
// system:masters, signed by the admin-kubeconfig-signer, with a fresh RSA
// 2048 key: what openshift-install makes for auth/kubeconfig when tls/
// holds the signer but no admin-kubeconfig-client pair. It is valid from
// the signer's start for ten years, never past the signer.
func (t *TLS) IssueAdminClient(rnd io.Reader, now time.Time) (certPEM, keyPEM []byte, err error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	ca := t.Signers[AdminSigner]
	key, err := rsa.GenerateKey(rnd, 2048)
	if err != nil {
		return nil, nil, fmt.Errorf("generate admin client key: %w", err)
	}
	notAfter := now.UTC().Add(validity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	cert, err := (&pki.CA{Cert: ca.Cert, Key: ca.Key}).Issue(rnd, key.Public(), pki.Spec{
		Subject:     pkix.Name{CommonName: "system:admin", Organization: []string{"system:masters"}},
		NotBefore:   ca.Cert.NotBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("sign admin client certificate: %w", err)
	}
	keyPEM, err = pki.KeyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pki.CertPEM(cert), keyPEM, nil
}

// Kubeconfig is the admin kubeconfig for https://api.<name>.<baseDomain>:6443
// in openshift-install's shape: cluster <name>, user and context admin,
// the CA bundle and the client certificate and key as data.
func Kubeconfig(clusterName, baseDomain string, caPEM, certPEM, keyPEM []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString
	server := fmt.Sprintf("https://api.%s.%s:6443", clusterName, baseDomain)
	return []byte(fmt.Sprintf(`clusters:
- cluster:
    certificate-authority-data: %s
    server: %s
  name: %s
contexts:
- context:
    cluster: %s
    user: admin
  name: admin
current-context: admin
preferences: {}
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
`, b64(caPEM), server, clusterName, clusterName, b64(certPEM), b64(keyPEM)))
}
