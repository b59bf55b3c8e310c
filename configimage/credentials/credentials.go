// Package credentials makes the secrets an agent-based install carries in its
// config image, as openshift-install's agent assets make them: the ECDSA
// P-256 key whose public half verifies the service's tokens, the kubeadmin
// password and its bcrypt hash, the four RSA signer CAs, and the admin
// kubeconfig a user gets in auth/kubeconfig. It owns the /opt/agent/tls
// format (tls.go): its file names, how node zero reads and checks it, and
// what is derived from it, so that the user's auth/kubeconfig and the
// cluster node zero installs trust the same signers.
//
// Everything is generated once and kept in a State that the caller saves in
// the install directory: building again from the same State gives the same
// bytes (certificates use RSA PKCS #1 v1.5 signatures, which are
// deterministic). Tokens are signed by the caller (daemon/auth) with the
// key kept here, so this package stays a leaf.
//
// credentials imports only the standard library and golang.org/x/crypto.
package credentials

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"
)

// Signers are the CA names of /opt/agent/tls, as openshift-install names
// the files (<name>.crt, <name>.key).
var Signers = []string{
	"admin-kubeconfig-signer",
	"kube-apiserver-lb-signer",
	"kube-apiserver-localhost-signer",
	"kube-apiserver-service-network-signer",
}

// validity is openshift-install's ten years for these signers.
const validity = 10 * 365 * 24 * time.Hour

// State is what an install directory keeps so that a rebuild gives the same
// bytes: every key, certificate and the password. Save it with mode 0600.
type State struct {
	Version         int               `json:"version"`
	ECPrivateKeyPEM string            `json:"ec_private_key_pem"`
	KubeadminPass   string            `json:"kubeadmin_password"`
	KubeadminHash   string            `json:"kubeadmin_password_hash"`
	SignerKeyPEM    map[string]string `json:"signer_key_pem"`
	SignerCertPEM   map[string]string `json:"signer_cert_pem"`
	AdminCertPEM    string            `json:"admin_client_cert_pem"`
	AdminKeyPEM     string            `json:"admin_client_key_pem"`
	GeneratedAtUnix int64             `json:"generated_at"`
	// Tokens are the service tokens by scheme (agentAuth, userAuth,
	// watcherAuth), signed once with the token key by the caller and kept:
	// ECDSA signatures differ on every signing.
	Tokens map[string]string `json:"tokens,omitempty"`
	// InfraEnvID is the infra-env id the service is told to use.
	InfraEnvID       string `json:"infra_env_id,omitempty"`
	ClusterAPIServer string `json:"api_server,omitempty"`
}

// ErrState: a saved state that cannot be used.
var ErrState = errors.New("credentials state")

// New makes a fresh State. rnd is the randomness (crypto/rand.Reader in
// production), now the certificates' start.
func New(rnd io.Reader, now time.Time) (*State, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	st := &State{Version: 1, SignerKeyPEM: map[string]string{}, SignerCertPEM: map[string]string{}, GeneratedAtUnix: now.Unix()}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rnd)
	if err != nil {
		return nil, fmt.Errorf("generate token key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(ec)
	if err != nil {
		return nil, fmt.Errorf("marshal token key: %w", err)
	}
	st.ECPrivateKeyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	t, err := NewTLS(rnd, now)
	if err != nil {
		return nil, err
	}
	st.KubeadminPass, st.KubeadminHash = t.Password, string(t.PasswordHash)
	for _, name := range Signers {
		st.SignerCertPEM[name], st.SignerKeyPEM[name] = string(t.Signers[name].CertPEM), string(t.Signers[name].KeyPEM)
	}
	// The admin client certificate of auth/kubeconfig.
	certPEM, keyPEM, err := t.IssueAdminClient(rnd, now)
	if err != nil {
		return nil, err
	}
	st.AdminCertPEM, st.AdminKeyPEM = string(certPEM), string(keyPEM)
	return st, nil
}

// passwordChars is the alphabet of openshift-install's kubeadmin password
// (pkg/asset/password): letters and digits without the look-alikes l, O,
// 0 and 1.
const passwordChars = "abcdefghijkmnopqrstuvwxyz" + "ABCDEFGHIJKLMNPQRSTUVWXYZ" + "23456789"

// password makes a 23-character kubeadmin password: four groups of five
// letters and digits joined by '-', the shape openshift-install gives it.
func password(rnd io.Reader) (string, error) {
	var b strings.Builder
	max := big.NewInt(int64(len(passwordChars)))
	for i := 0; i < 20; i++ {
		if i > 0 && i%5 == 0 {
			b.WriteByte('-')
		}
		n, err := rand.Int(rnd, max)
		if err != nil {
			return "", fmt.Errorf("kubeadmin password: %w", err)
		}
		b.WriteByte(passwordChars[n.Int64()])
	}
	return b.String(), nil
}

// Marshal returns the state as JSON for the install directory.
func (s *State) Marshal() ([]byte, error) { return json.MarshalIndent(s, "", "  ") }

// Parse reads a saved state and checks that it is whole.
func Parse(b []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrState, err)
	}
	if s.Version != 1 {
		return nil, fmt.Errorf("%w: version %d, want 1", ErrState, s.Version)
	}
	if _, err := s.TokenKey(); err != nil {
		return nil, err
	}
	if _, err := s.TLS(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	return &s, nil
}

// TokenKey is the ECDSA key the caller signs the service tokens with.
func (s *State) TokenKey() (*ecdsa.PrivateKey, error) {
	blk, _ := pem.Decode([]byte(s.ECPrivateKeyPEM))
	if blk == nil {
		return nil, fmt.Errorf("%w: no token key", ErrState)
	}
	k, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: token key: %v", ErrState, err)
	}
	return k, nil
}

// PublicKeyPEM is the token key's public half, PEM.
func (s *State) PublicKeyPEM() ([]byte, error) {
	k, err := s.TokenKey()
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// TLSFiles are the /opt/agent/tls files: each signer's .crt and .key,
// kubeadmin-password.hash and kubeadmin-password (see PasswordFile for why
// the password travels too).
func (s *State) TLSFiles() map[string][]byte {
	out := map[string][]byte{PasswordHashFile: []byte(s.KubeadminHash), PasswordFile: []byte(s.KubeadminPass)}
	for _, n := range Signers {
		out[n+".crt"] = []byte(s.SignerCertPEM[n])
		out[n+".key"] = []byte(s.SignerKeyPEM[n])
	}
	return out
}

// TLS parses the state's /opt/agent/tls files as node zero reads them.
func (s *State) TLS() (*TLS, error) { return ParseTLS(TLSDirName, s.TLSFiles()) }

// TLSDirName names the directory in ParseTLS's errors for a state's files.
const TLSDirName = "/opt/agent/tls"

// Kubeconfig is the admin kubeconfig for https://api.<name>.<baseDomain>:6443:
// the three kube-apiserver signers as the CA bundle (TLS.CABundle),
// system:admin as the user.
func (s *State) Kubeconfig(clusterName, baseDomain string) []byte {
	var ca strings.Builder
	for _, n := range Signers[1:] {
		ca.WriteString(s.SignerCertPEM[n])
	}
	return Kubeconfig(clusterName, baseDomain, []byte(ca.String()), []byte(s.AdminCertPEM), []byte(s.AdminKeyPEM))
}
