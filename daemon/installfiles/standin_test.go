package installfiles

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// standInFromTLS is the stand-in openshift-install's helper: it writes
// <dir>/auth/kubeconfig and <dir>/bootstrap.ign from <dir>/tls the way
// openshift-install does when it loaded its signers from there. It reads
// the files with the standard library alone, not with the code under
// test: the CA data is the three kube-apiserver signers' certificates as
// they are, the client certificate is a fresh one signed by the
// admin-kubeconfig-signer's key, and bootstrap.ign (Ignition 3.2.0)
// carries the kube-apiserver signers, the admin client CA bundle and the
// kube-system/kubeadmin secret made from kubeadmin-password.hash.
func standInFromTLS(dir string, outputs []string) error {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, "tls", name)) }
	var ca []byte
	api := []string{"kube-apiserver-lb-signer", "kube-apiserver-localhost-signer", "kube-apiserver-service-network-signer"}
	type file struct {
		Path     string `json:"path"`
		Mode     int    `json:"mode"`
		Contents struct {
			Source string `json:"source"`
		} `json:"contents"`
	}
	var files []file
	add := func(path string, mode int, b []byte) {
		f := file{Path: path, Mode: mode}
		f.Contents.Source = "data:;base64," + base64.StdEncoding.EncodeToString(b)
		files = append(files, f)
	}
	for _, n := range api {
		crt, err := read(n + ".crt")
		if err != nil {
			return err
		}
		key, err := read(n + ".key")
		if err != nil {
			return err
		}
		ca = append(ca, crt...)
		add("/opt/openshift/tls/"+n+".crt", 0o644, crt)
		add("/opt/openshift/tls/"+n+".key", 0o600, key)
	}
	adminCrt, err := read("admin-kubeconfig-signer.crt")
	if err != nil {
		return err
	}
	adminKey, err := read("admin-kubeconfig-signer.key")
	if err != nil {
		return err
	}
	add("/opt/openshift/tls/admin-kubeconfig-ca-bundle.crt", 0o644, adminCrt)
	hash, err := read("kubeadmin-password.hash")
	if err != nil {
		return err
	}
	add("/opt/openshift/openshift/99_kubeadmin-password-secret.yaml", 0o600, []byte(
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: kubeadmin\n  namespace: kube-system\ntype: Opaque\ndata:\n  kubeadmin: "+base64.StdEncoding.EncodeToString(hash)+"\n"))

	cb, _ := pem.Decode(adminCrt)
	kb, _ := pem.Decode(adminKey)
	if cb == nil || kb == nil {
		return errors.New("admin-kubeconfig-signer: no PEM")
	}
	signer, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return err
	}
	signerKey, err := x509.ParsePKCS1PrivateKey(kb.Bytes)
	if err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "system:admin", Organization: []string{"system:masters"}},
		NotBefore:    signer.NotBefore,
		NotAfter:     signer.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}, signer, &key.PublicKey, signerKey)
	if err != nil {
		return err
	}
	b64 := base64.StdEncoding.EncodeToString
	kubeconfig := fmt.Sprintf("clusters:\n- cluster:\n    certificate-authority-data: %s\n    server: https://api.edge.example.com:6443\n  name: edge\n"+
		"contexts:\n- context:\n    cluster: edge\n    user: admin\n  name: admin\ncurrent-context: admin\npreferences: {}\n"+
		"users:\n- name: admin\n  user:\n    client-certificate-data: %s\n    client-key-data: %s\n",
		b64(ca), b64(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		b64(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})))
	ign, err := json.Marshal(map[string]any{"ignition": map[string]any{"version": "3.2.0"}, "storage": map[string]any{"files": files}})
	if err != nil {
		return err
	}
	for _, o := range outputs {
		var b []byte
		switch o {
		case "auth/kubeconfig":
			b = []byte(kubeconfig)
		case "bootstrap.ign":
			b = ign
		default:
			return fmt.Errorf("no output %q from tls/", o)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, o)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, o), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
