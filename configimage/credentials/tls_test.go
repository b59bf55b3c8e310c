package credentials

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// kubeconfigData decodes the CA, client certificate and key of a
// kubeconfig this package wrote.
func kubeconfigData(t *testing.T, kc []byte) (ca, cert, key []byte) {
	t.Helper()
	var doc struct {
		Clusters []struct {
			Cluster struct {
				CA string `yaml:"certificate-authority-data"`
			} `yaml:"cluster"`
		} `yaml:"clusters"`
		Users []struct {
			User struct {
				Cert string `yaml:"client-certificate-data"`
				Key  string `yaml:"client-key-data"`
			} `yaml:"user"`
		} `yaml:"users"`
	}
	if err := yaml.Unmarshal(kc, &doc); err != nil || len(doc.Clusters) != 1 || len(doc.Users) != 1 {
		t.Fatalf("kubeconfig %s: %v", kc, err)
	}
	dec := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return dec(doc.Clusters[0].Cluster.CA), dec(doc.Users[0].User.Cert), dec(doc.Users[0].User.Key)
}

// TestStateTLS: the state's /opt/agent/tls files parse as node zero reads
// them, with RSA signers, the password, and the very CA bundle of the
// user's kubeconfig; a client certificate node zero issues from them
// chains to the admin signer that the user's own does.
func TestStateTLS(t *testing.T) {
	s := fresh(t)
	tls, err := s.TLS()
	if err != nil {
		t.Fatalf("State.TLS: %v", err)
	}
	if tls.Password != s.KubeadminPass || string(tls.PasswordHash) != s.KubeadminHash {
		t.Errorf("TLS password %q hash %q, want the state's", tls.Password, tls.PasswordHash)
	}
	for _, n := range Signers {
		sg := tls.Signers[n]
		if sg.Key.N.BitLen() != 2048 {
			t.Errorf("%s key: %d bits, want openshift-install's RSA 2048", n, sg.Key.N.BitLen())
		}
		if _, ok := sg.Cert.PublicKey.(*rsa.PublicKey); !ok {
			t.Errorf("%s certificate key is %T, want RSA", n, sg.Cert.PublicKey)
		}
	}
	if d := cmp.Diff(s.TLSFiles(), tls.Files()); d != "" {
		t.Errorf("TLS.Files differs from State.TLSFiles (-state +tls):\n%s", d)
	}

	ca, userCert, _ := kubeconfigData(t, s.Kubeconfig("ostest", "example.com"))
	if !bytes.Equal(ca, tls.CABundle()) {
		t.Error("TLS.CABundle differs from the CA data of the user's kubeconfig")
	}
	pool := x509.NewCertPool()
	pool.AddCert(tls.Signers[AdminSigner].Cert)
	certPEM, keyPEM, err := tls.IssueAdminClient(nil, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string][]byte{"user's": userCert, "issued": certPEM} {
		c := parseCert(t, string(p))
		if _, err := c.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now.Add(2 * time.Hour), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s client certificate does not chain to %s: %v", name, AdminSigner, err)
		}
		if c.Subject.CommonName != "system:admin" || !slices.Equal(c.Subject.Organization, []string{"system:masters"}) {
			t.Errorf("%s client subject %v, want system:admin in system:masters", name, c.Subject)
		}
		if c.NotAfter.After(tls.Signers[AdminSigner].Cert.NotAfter) {
			t.Errorf("%s client certificate outlives its signer: %v > %v", name, c.NotAfter, tls.Signers[AdminSigner].Cert.NotAfter)
		}
	}
	if _, err := x509.ParsePKCS1PrivateKey(pemBytes(t, keyPEM)); err != nil {
		t.Errorf("issued client key: %v", err)
	}
}

func pemBytes(t *testing.T, p []byte) []byte {
	t.Helper()
	blk, _ := pem.Decode(p)
	if blk == nil {
		t.Fatalf("no PEM in %q", p)
	}
	return blk.Bytes
}

func writeDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestReadTLSDir: every regular file is read and returned (an unknown one
// too: assisted-service copies them all); directories and symlinks are
// not; a directory as openshift-install's config image leaves it (the
// hash, no password) parses with an empty password.
func TestReadTLSDir(t *testing.T) {
	s := fresh(t)
	files := s.TLSFiles()
	files["internal-release-registry-signer.crt"] = []byte("not ours to read")
	dir := writeDir(t, files)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, PasswordFile), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	tls, got, err := ReadTLSDir(dir)
	if err != nil {
		t.Fatalf("ReadTLSDir: %v", err)
	}
	if d := cmp.Diff(slices.Sorted(maps.Keys(files)), slices.Sorted(maps.Keys(got))); d != "" {
		t.Errorf("files read (-want +got):\n%s", d)
	}
	if tls.Password != s.KubeadminPass {
		t.Errorf("password %q, want %q", tls.Password, s.KubeadminPass)
	}

	if err := os.Remove(filepath.Join(dir, PasswordFile)); err != nil {
		t.Fatal(err)
	}
	if tls, _, err = ReadTLSDir(dir); err != nil || tls.Password != "" || string(tls.PasswordHash) != s.KubeadminHash {
		t.Errorf("hash-only directory: %v, password %q; want the hash and no password", err, tls.Password)
	}

	if _, _, err := ReadTLSDir(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v, want ErrNotExist", err)
	}
	big := writeDir(t, map[string][]byte{"huge.crt": bytes.Repeat([]byte("x"), maxTLSFile+1)})
	if _, _, err := ReadTLSDir(big); err == nil || !strings.Contains(err.Error(), "huge.crt") {
		t.Errorf("oversized file: %v, want an error naming huge.crt", err)
	}
}

// TestParseTLSProblems: each damage is reported on its file, under the
// directory's name; several are reported together.
func TestParseTLSProblems(t *testing.T) {
	s := fresh(t)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	lb, adm := "kube-apiserver-lb-signer", AdminSigner
	tests := []struct {
		name   string
		damage func(m map[string][]byte)
		want   []string
	}{
		{"no hash", func(m map[string][]byte) { delete(m, PasswordHashFile) },
			[]string{"/opt/agent/tls/kubeadmin-password.hash: missing"}},
		{"hash not bcrypt", func(m map[string][]byte) { m[PasswordHashFile] = []byte("secret") },
			[]string{"/opt/agent/tls/kubeadmin-password.hash: not a bcrypt hash"}},
		{"password of another hash", func(m map[string][]byte) { m[PasswordFile] = []byte("aaaaa-bbbbb-ccccc-ddddd") },
			[]string{"/opt/agent/tls/kubeadmin-password: does not match kubeadmin-password.hash"}},
		{"no key", func(m map[string][]byte) { delete(m, lb+".key") },
			[]string{"/opt/agent/tls/kube-apiserver-lb-signer.key: missing"}},
		{"certificate not PEM", func(m map[string][]byte) { m[lb+".crt"] = []byte("hello") },
			[]string{"/opt/agent/tls/kube-apiserver-lb-signer.crt: no PEM CERTIFICATE block"}},
		{"not a CA", func(m map[string][]byte) { m[adm+".crt"] = []byte(s.AdminCertPEM) },
			[]string{"/opt/agent/tls/admin-kubeconfig-signer.crt: not a CA certificate"}},
		{"another signer's key", func(m map[string][]byte) { m[lb+".key"] = m[adm+".key"] },
			[]string{"/opt/agent/tls/kube-apiserver-lb-signer.key: not the key of kube-apiserver-lb-signer.crt"}},
		{"EC key", func(m map[string][]byte) {
			m[lb+".key"] = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER})
		}, []string{"/opt/agent/tls/kube-apiserver-lb-signer.key: a *ecdsa.PrivateKey, want an RSA key"}},
		{"two at once", func(m map[string][]byte) {
			delete(m, adm+".crt")
			m[PasswordHashFile] = []byte("x")
		}, []string{"/opt/agent/tls/admin-kubeconfig-signer.crt: missing", "/opt/agent/tls/kubeadmin-password.hash: not a bcrypt hash"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := s.TLSFiles()
			tt.damage(m)
			_, err := ParseTLS(TLSDirName, m)
			if err == nil {
				t.Fatal("ParseTLS accepted the damaged files")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("ParseTLS = %q, want %d problems", err, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("problem %d = %q, want it to start %q", i, lines[i], w)
				}
			}
		})
	}
}
