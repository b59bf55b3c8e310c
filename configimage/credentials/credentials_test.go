package credentials

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"
)

var (
	once  sync.Once
	state *State
	now   = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
)

// fresh returns one generated state per test run (RSA keys are slow).
func fresh(t *testing.T) *State {
	t.Helper()
	once.Do(func() {
		s, err := New(nil, now)
		if err != nil {
			t.Fatal(err)
		}
		state = s
	})
	if state == nil {
		t.Fatal("no state")
	}
	return state
}

func TestPassword(t *testing.T) {
	s := fresh(t)
	group := "[" + passwordChars + "]{5}"
	if !regexp.MustCompile("^" + group + "(-" + group + "){3}$").MatchString(s.KubeadminPass) {
		t.Errorf("password %q is not four groups of five of openshift-install's letters and digits", s.KubeadminPass)
	}
	if strings.ContainsAny(passwordChars, "lO01") {
		t.Errorf("alphabet %q has a look-alike openshift-install leaves out", passwordChars)
	}
	if err := bcrypt.CompareHashAndPassword([]byte(s.KubeadminHash), []byte(s.KubeadminPass)); err != nil {
		t.Errorf("hash does not match the password: %v", err)
	}
}

func parseCert(t *testing.T, p string) *x509.Certificate {
	t.Helper()
	blk, _ := pem.Decode([]byte(p))
	if blk == nil {
		t.Fatalf("no PEM in %q", p)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSignersAndAdminCertificate(t *testing.T) {
	s := fresh(t)
	pool := x509.NewCertPool()
	for _, n := range Signers {
		c := parseCert(t, s.SignerCertPEM[n])
		if c.Subject.CommonName != n || !c.IsCA {
			t.Errorf("signer %s: CN %q, CA %v", n, c.Subject.CommonName, c.IsCA)
		}
		if got := c.NotAfter.Sub(c.NotBefore); got != validity {
			t.Errorf("signer %s valid for %v, want %v", n, got, validity)
		}
		if n == "admin-kubeconfig-signer" {
			pool.AddCert(c)
		}
	}
	admin := parseCert(t, s.AdminCertPEM)
	if admin.Subject.CommonName != "system:admin" || len(admin.Subject.Organization) != 1 || admin.Subject.Organization[0] != "system:masters" {
		t.Errorf("admin subject = %v", admin.Subject)
	}
	if _, err := admin.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now.Add(time.Hour), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate does not verify against the admin kubeconfig signer: %v", err)
	}
	files := s.TLSFiles()
	if len(files) != 10 || string(files["kubeadmin-password.hash"]) != s.KubeadminHash || string(files["kubeadmin-password"]) != s.KubeadminPass {
		t.Errorf("TLS files: %d, hash %q, password %q; want 10 with the state's hash and password", len(files), files["kubeadmin-password.hash"], files["kubeadmin-password"])
	}
}

func TestKubeconfig(t *testing.T) {
	s := fresh(t)
	kc := s.Kubeconfig("ostest", "example.com")
	var doc struct {
		Clusters []struct {
			Cluster struct {
				CA     string `yaml:"certificate-authority-data"`
				Server string `yaml:"server"`
			} `yaml:"cluster"`
		} `yaml:"clusters"`
		Users []struct {
			User struct {
				Cert string `yaml:"client-certificate-data"`
				Key  string `yaml:"client-key-data"`
			} `yaml:"user"`
		} `yaml:"users"`
		Current string `yaml:"current-context"`
	}
	if err := yaml.Unmarshal(kc, &doc); err != nil {
		t.Fatalf("kubeconfig is not YAML: %v", err)
	}
	if len(doc.Clusters) != 1 || doc.Clusters[0].Cluster.Server != "https://api.ostest.example.com:6443" || doc.Current != "admin" {
		t.Fatalf("kubeconfig = %s", kc)
	}
	ca, err := base64.StdEncoding.DecodeString(doc.Clusters[0].Cluster.CA)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(ca, []byte("BEGIN CERTIFICATE")); n != 3 {
		t.Errorf("CA bundle has %d certificates, want the 3 kube-apiserver signers", n)
	}
	cert, _ := base64.StdEncoding.DecodeString(doc.Users[0].User.Cert)
	if string(cert) != s.AdminCertPEM {
		t.Error("client certificate is not the admin certificate")
	}
	if !bytes.Equal(kc, s.Kubeconfig("ostest", "example.com")) {
		t.Error("the kubeconfig is not reproducible from the same state")
	}
}

func TestStateRoundTripAndDamage(t *testing.T) {
	s := fresh(t)
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(Marshal(state)): %v", err)
	}
	pub1, _ := s.PublicKeyPEM()
	pub2, _ := back.PublicKeyPEM()
	if !bytes.Equal(pub1, pub2) || !bytes.Equal(s.Kubeconfig("a", "b.c"), back.Kubeconfig("a", "b.c")) {
		t.Error("a reloaded state builds different bytes")
	}
	for name, damage := range map[string]func(*State){
		"wrong hash":      func(s *State) { s.KubeadminHash = "$2a$10$" + strings.Repeat("x", 53) },
		"missing signer":  func(s *State) { delete(s.SignerCertPEM, Signers[2]) },
		"bad token key":   func(s *State) { s.ECPrivateKeyPEM = "nope" },
		"unknown version": func(s *State) { s.Version = 7 },
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := Parse(b)
			damage(c)
			cb, _ := c.Marshal()
			if _, err := Parse(cb); !errors.Is(err, ErrState) {
				t.Errorf("Parse(damaged) = %v, want ErrState", err)
			}
		})
	}
	if _, err := Parse([]byte("{")); !errors.Is(err, ErrState) {
		t.Errorf("Parse(garbage) = %v", err)
	}
}
