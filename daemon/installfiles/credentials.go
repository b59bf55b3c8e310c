package installfiles

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strings"

	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/kube"
)

// clusterCredentials are a cluster's identity and trust as the built-in
// generator lays them down in place of openshift-install's assets: the
// cluster and infra IDs, the signers and kubeadmin password hash of the
// credential source, and an admin kubeconfig whose client certificate the
// source's admin-kubeconfig-signer issued.
//
// The source (credentialSource) is the config image's /opt/agent/tls
// (Input.TLSDir) on node zero, so the user's auth/kubeconfig from
// create config-image opens the cluster and its kubeadmin password logs
// in; a service started without one (nodezero service alone, tests) mints
// a set of the same form. Either way it is one credentials.TLS and one
// code path from there on.
type clusterCredentials struct {
	clusterID string // a random UUID
	infraID   string // <name>-<5 lowercase letters>

	tls *credentials.TLS
	// password is the kubeadmin password, "" when the source carries only
	// its hash: openshift-install then writes an empty
	// auth/kubeadmin-password too, and assisted-service serves that.
	password   string
	kubeconfig []byte
}

// credentialSource is where a cluster's signers and kubeadmin password
// come from: every regular file of in.TLSDir, parsed and checked, or a
// freshly minted set (files nil) when there is no directory.
func credentialSource(in Input) (tls *credentials.TLS, files map[string][]byte, err error) {
	if in.TLSDir == "" {
		tls, err = credentials.NewTLS(in.Rand, in.Now)
		return tls, nil, err
	}
	return credentials.ReadTLSDir(in.TLSDir)
}

func newClusterCredentials(in Input, name, baseDomain string) (*clusterCredentials, error) {
	c := &clusterCredentials{}
	var err error
	if c.clusterID, err = newUUID(in.Rand); err != nil {
		return nil, fmt.Errorf("cluster id: %w", err)
	}
	if c.infraID, err = newInfraID(in.Rand, name); err != nil {
		return nil, fmt.Errorf("infra id: %w", err)
	}
	if c.tls, _, err = credentialSource(in); err != nil {
		return nil, err
	}
	c.password = c.tls.Password
	cert, key, err := c.tls.IssueAdminClient(in.Rand, in.Now)
	if err != nil {
		return nil, err
	}
	c.kubeconfig = credentials.Kubeconfig(name, baseDomain, c.tls.CABundle(), cert, key)
	return c, nil
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
func (c *clusterCredentials) metadata(name string) ([]byte, error) {
	return json.MarshalIndent(map[string]string{
		"clusterName": name,
		"clusterID":   c.clusterID,
		"infraID":     c.infraID,
	}, "", "  ")
}

// kubeadminSecret is the kube-system/kubeadmin secret with the source's
// bcrypt hash, which the OAuth server checks the password against.
func (c *clusterCredentials) kubeadminSecret() []byte {
	return []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: kubeadmin\n  namespace: kube-system\ntype: Opaque\ndata:\n  kubeadmin: " +
		base64.StdEncoding.EncodeToString(c.tls.PasswordHash) + "\n")
}

// checkKubeconfig checks that an admin kubeconfig (name says which, in
// errors) belongs to the credential source: its CA data holds the three
// kube-apiserver signers and its client certificate chains to the
// admin-kubeconfig-signer. openshift-install's auth/kubeconfig passes when
// it loaded tls/; one that minted its own signers would lock the user out.
func checkKubeconfig(name string, kc []byte, tls *credentials.TLS) error {
	cfg, err := kube.ParseKubeconfig(kc, name)
	if err != nil {
		return err
	}
	trusted := map[string]bool{}
	for rest := cfg.CAData; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		trusted[string(blk.Bytes)] = true
	}
	for _, n := range credentials.Signers[1:] {
		if !trusted[string(tls.Signers[n].Cert.Raw)] {
			return fmt.Errorf("%s: certificate-authority-data lacks the cluster TLS directory's %s", name, n)
		}
	}
	blk, _ := pem.Decode(cfg.CertData)
	if blk == nil {
		return fmt.Errorf("%s: client-certificate-data: no PEM certificate", name)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return fmt.Errorf("%s: client-certificate-data: %w", name, err)
	}
	admin := tls.Signers[credentials.AdminSigner].Cert
	roots := x509.NewCertPool()
	roots.AddCert(admin)
	// The chain is checked at a time both certificates are valid, not at
	// node zero's clock: a host a little behind the machine that made the
	// config image is no reason to fail here.
	at := cert.NotBefore
	if admin.NotBefore.After(at) {
		at = admin.NotBefore
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return fmt.Errorf("%s: the client certificate does not chain to the cluster TLS directory's %s: %w", name, credentials.AdminSigner, err)
	}
	return nil
}
