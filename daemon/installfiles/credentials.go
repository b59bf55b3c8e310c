package installfiles

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"
)

// credentials are what the built-in generator makes in place of
// openshift-install's auth assets: the cluster's identity, the kubeadmin
// password, and an admin kubeconfig with the two signers behind it.
type credentials struct {
	clusterID string // a random UUID
	infraID   string // <name>-<5 lowercase letters>

	password     string
	passwordHash []byte // bcrypt, for the kube-system/kubeadmin secret

	// adminSigner signs the admin client certificate; the API server
	// trusts it for clients. apiSigner is the CA the kubeconfig trusts
	// for the API's serving certificate, which bootstrap issues from its
	// key.
	adminSignerCert []byte // PEM
	apiSignerCert   []byte
	apiSignerKey    []byte

	kubeconfig []byte
}

// Signer names, as openshift-install names them under /opt/openshift/tls.
const (
	adminSignerName = "admin-kubeconfig-signer"
	apiSignerName   = "kube-apiserver-lb-signer"
)

// certValidity is openshift-install's ten years for the admin signer and
// the admin client certificate.
const certValidity = 10 * 365 * 24 * time.Hour

// clockSkew backdates certificates so that a host whose clock runs a little
// behind node zero's still accepts them.
const clockSkew = 5 * time.Minute

func newCredentials(rnd io.Reader, now time.Time, name, baseDomain string) (*credentials, error) {
	c := &credentials{}
	var err error
	if c.clusterID, err = newUUID(rnd); err != nil {
		return nil, fmt.Errorf("cluster id: %w", err)
	}
	if c.infraID, err = newInfraID(rnd, name); err != nil {
		return nil, fmt.Errorf("infra id: %w", err)
	}
	if c.password, err = newKubeadminPassword(rnd); err != nil {
		return nil, fmt.Errorf("kubeadmin password: %w", err)
	}
	if c.passwordHash, err = bcrypt.GenerateFromPassword([]byte(c.password), bcrypt.DefaultCost); err != nil {
		return nil, fmt.Errorf("kubeadmin password hash: %w", err)
	}

	adminCA, adminKey, err := newCA(rnd, now, adminSignerName)
	if err != nil {
		return nil, err
	}
	apiCA, apiKey, err := newCA(rnd, now, apiSignerName)
	if err != nil {
		return nil, err
	}
	clientCert, clientKey, err := newAdminClient(rnd, now, adminCA, adminKey)
	if err != nil {
		return nil, err
	}
	c.adminSignerCert = pemCert(adminCA.Raw)
	c.apiSignerCert = pemCert(apiCA.Raw)
	if c.apiSignerKey, err = pemKey(apiKey); err != nil {
		return nil, err
	}
	clientKeyPEM, err := pemKey(clientKey)
	if err != nil {
		return nil, err
	}
	server := fmt.Sprintf("https://api.%s.%s:6443", name, baseDomain)
	if c.kubeconfig, err = kubeconfig(name, server, c.apiSignerCert, pemCert(clientCert), clientKeyPEM); err != nil {
		return nil, err
	}
	return c, nil
}

func newKey() (*ecdsa.PrivateKey, error) {
	// The reader argument is ignored for key generation since Go 1.26.
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func serial(rnd io.Reader) (*big.Int, error) {
	return rand.Int(rnd, new(big.Int).Lsh(big.NewInt(1), 127))
}

func newCA(rnd io.Reader, now time.Time, cn string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := newKey()
	if err != nil {
		return nil, nil, fmt.Errorf("%s key: %w", cn, err)
	}
	sn, err := serial(rnd)
	if err != nil {
		return nil, nil, fmt.Errorf("%s serial: %w", cn, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: cn, OrganizationalUnit: []string{"openshift"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rnd, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("%s certificate: %w", cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// newAdminClient is the system:admin client certificate of the admin
// kubeconfig, in the system:masters group as openshift-install makes it.
func newAdminClient(rnd io.Reader, now time.Time, ca *x509.Certificate, caKey *ecdsa.PrivateKey) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := newKey()
	if err != nil {
		return nil, nil, fmt.Errorf("admin client key: %w", err)
	}
	sn, err := serial(rnd)
	if err != nil {
		return nil, nil, fmt.Errorf("admin client serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: "system:admin", Organization: []string{"system:masters"}},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rnd, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("admin client certificate: %w", err)
	}
	return der, key, nil
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func pemKey(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// kubeconfig is the admin kubeconfig: cluster <name>, user admin, context
// admin.
func kubeconfig(name, server string, caPEM, certPEM, keyPEM []byte) ([]byte, error) {
	b64 := base64.StdEncoding.EncodeToString
	type named struct {
		Name    string         `yaml:"name"`
		Cluster map[string]any `yaml:"cluster,omitempty"`
		User    map[string]any `yaml:"user,omitempty"`
		Context map[string]any `yaml:"context,omitempty"`
	}
	cfg := struct {
		APIVersion     string         `yaml:"apiVersion"`
		Kind           string         `yaml:"kind"`
		Clusters       []named        `yaml:"clusters"`
		Contexts       []named        `yaml:"contexts"`
		CurrentContext string         `yaml:"current-context"`
		Preferences    map[string]any `yaml:"preferences"`
		Users          []named        `yaml:"users"`
	}{
		APIVersion: "v1",
		Kind:       "Config",
		Clusters: []named{{Name: name, Cluster: map[string]any{
			"server": server, "certificate-authority-data": b64(caPEM),
		}}},
		Contexts:       []named{{Name: "admin", Context: map[string]any{"cluster": name, "user": "admin"}}},
		CurrentContext: "admin",
		Preferences:    map[string]any{},
		Users: []named{{Name: "admin", User: map[string]any{
			"client-certificate-data": b64(certPEM), "client-key-data": b64(keyPEM),
		}}},
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(cfg); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// passwordAlphabet is openshift-install's (pkg/asset/password): letters and
// digits without the look-alikes l, O, 0 and 1.
const passwordAlphabet = "abcdefghijkmnopqrstuvwxyz" + "ABCDEFGHIJKLMNPQRSTUVWXYZ" + "23456789"

// newKubeadminPassword is openshift's form: four groups of five characters
// joined by '-', 23 characters in all.
func newKubeadminPassword(rnd io.Reader) (string, error) {
	var b strings.Builder
	for i := range 20 {
		if i > 0 && i%5 == 0 {
			b.WriteByte('-')
		}
		n, err := rand.Int(rnd, big.NewInt(int64(len(passwordAlphabet))))
		if err != nil {
			return "", err
		}
		b.WriteByte(passwordAlphabet[n.Int64()])
	}
	return b.String(), nil
}

// newUUID is a random (version 4) UUID.
func newUUID(rnd io.Reader) (string, error) {
	var u [16]byte
	if _, err := io.ReadFull(rnd, u[:]); err != nil {
		return "", err
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:]), nil
}

// infraIDMax is openshift-install's limit: resources named after the infra
// ID get suffixes and most names stop at about 32 characters.
const infraIDMax = 27

var notNameChars = regexp.MustCompile(`[^A-Za-z0-9-]+`)
var dashes = regexp.MustCompile(`-{2,}`)

// newInfraID is openshift-install's form: the cluster name made of letters,
// digits and single dashes, cut so that the whole stays within 27
// characters, a dash and five random lowercase letters.
func newInfraID(rnd io.Reader, name string) (string, error) {
	base := dashes.ReplaceAllString(notNameChars.ReplaceAllString(name, "-"), "-")
	const suffix = 5
	if len(base) > infraIDMax-suffix-1 {
		base = base[:infraIDMax-suffix-1]
	}
	base = strings.TrimRight(base, "-")
	var b strings.Builder
	b.WriteString(base)
	b.WriteByte('-')
	for range suffix {
		n, err := rand.Int(rnd, big.NewInt(26))
		if err != nil {
			return "", err
		}
		b.WriteByte(byte('a' + n.Int64()))
	}
	return b.String(), nil
}

// metadata is metadata.json as openshift-install writes it (the platform
// section left out: no destroy runs from it).
func (c *credentials) metadata(name string) ([]byte, error) {
	return json.MarshalIndent(map[string]string{
		"clusterName": name,
		"clusterID":   c.clusterID,
		"infraID":     c.infraID,
	}, "", "  ")
}

// kubeadminSecret is the kube-system/kubeadmin secret with the password's
// bcrypt hash, which the OAuth server checks the password against.
func (c *credentials) kubeadminSecret() []byte {
	return []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: kubeadmin\n  namespace: kube-system\ntype: Opaque\ndata:\n  kubeadmin: " +
		base64.StdEncoding.EncodeToString(c.passwordHash) + "\n")
}
