package installfiles

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"

	"github.com/nodezero/nodezero/configimage/credentials"
)

// imageState is what `nodezero create config-image` keeps for an install
// directory: the user's auth/kubeconfig and auth/kubeadmin-password and
// the config image's /opt/agent/tls come from it. imageTLSDir holds its
// /opt/agent/tls files, as a host has them once it loaded the image:
// testInput's TLSDir. One of each per test run (TestMain): RSA keys are
// slow.
var (
	imageState  *credentials.State
	imageTLSDir string
)

// setUpConfigImage makes imageState and imageTLSDir under dir.
func setUpConfigImage(dir string) error {
	st, err := credentials.New(nil, testNow.Add(-time.Hour))
	if err != nil {
		return err
	}
	imageState, imageTLSDir = st, filepath.Join(dir, "opt", "agent", "tls")
	if err := os.MkdirAll(imageTLSDir, 0o755); err != nil {
		return err
	}
	for name, b := range st.TLSFiles() {
		if err := os.WriteFile(filepath.Join(imageTLSDir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func configImageState(t *testing.T) *credentials.State {
	t.Helper()
	if imageState == nil {
		t.Fatal("no config image state: TestMain did not run")
	}
	return imageState
}

// tlsDir writes the config image's /opt/agent/tls files, as the host has
// them once it loaded the image; without the password file when hashOnly
// (openshift-install's own config images carry only the hash).
func tlsDir(t *testing.T, st *credentials.State, hashOnly bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "opt", "agent", "tls")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range st.TLSFiles() {
		if hashOnly && name == credentials.PasswordFile {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// kubeconfigParts decodes an admin kubeconfig's CA data and client
// certificate.
func kubeconfigParts(t *testing.T, kc []byte) (ca []byte, client *x509.Certificate) {
	t.Helper()
	m := parseYAML(t, kc)
	dec := func(v any) []byte {
		s, _ := v.(string)
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) == 0 {
			t.Fatalf("kubeconfig data %v: %v", v, err)
		}
		return b
	}
	cluster := m["clusters"].([]any)[0].(map[string]any)["cluster"].(map[string]any)
	user := m["users"].([]any)[0].(map[string]any)["user"].(map[string]any)
	return dec(cluster["certificate-authority-data"]), parseCert(t, dec(user["client-certificate-data"]))
}

// bootstrapTrust is what the generated Ignition configs carry of the
// cluster's trust, parsed as Ignition does: the kube-apiserver signers'
// certificates (in the kubeconfig's order), the admin client CA bundle,
// and the kube-system/kubeadmin secret's hash.
type bootstrapTrust struct {
	apiSigners []byte
	adminCA    *x509.Certificate
	hash       []byte
}

func trustOf(t *testing.T, files *Files) bootstrapTrust {
	t.Helper()
	fs := filesOf(t, parseIgn(t, FileBootstrap, files.Cluster[FileBootstrap]))
	var tr bootstrapTrust
	for _, n := range credentials.Signers[1:] {
		f, ok := fs["/opt/openshift/tls/"+n+".crt"]
		if !ok {
			t.Fatalf("bootstrap.ign has no /opt/openshift/tls/%s.crt", n)
		}
		tr.apiSigners = append(tr.apiSigners, f.content...)
	}
	tr.adminCA = parseCert(t, []byte(fs["/opt/openshift/tls/"+adminCABundle].content))
	secret := parseYAML(t, []byte(fs["/opt/openshift/openshift/99_kubeadmin-password-secret.yaml"].content))
	hash, err := base64.StdEncoding.DecodeString(secret["data"].(map[string]any)["kubeadmin"].(string))
	if err != nil {
		t.Fatal(err)
	}
	tr.hash = hash
	return tr
}

// checkOneSetOfCredentials is issue #16 item 4 on generated install files:
// the CA of the user's auth/kubeconfig is the CA the Ignition configs
// trust and the one node zero's kubeconfig carries; the user's client
// certificate and node zero's chain to the admin signer the configs
// carry; the user's auth/kubeadmin-password matches the hash the install
// uses, and the kubeadmin-password node zero serves is the user's (empty
// when the image carried only the hash, as openshift-install leaves it).
func checkOneSetOfCredentials(t *testing.T, files *Files, st *credentials.State, hashOnly bool) {
	t.Helper()
	userCA, userClient := kubeconfigParts(t, st.Kubeconfig("edge", "example.com"))
	servedCA, servedClient := kubeconfigParts(t, files.Cluster[FileKubeconfig])
	tr := trustOf(t, files)
	if !bytes.Equal(userCA, tr.apiSigners) {
		t.Error("the CA data of the user's auth/kubeconfig is not the kube-apiserver signers bootstrap.ign carries")
	}
	if !bytes.Equal(servedCA, userCA) {
		t.Error("the kubeconfig node zero serves has other CA data than the user's auth/kubeconfig")
	}
	roots := x509.NewCertPool()
	roots.AddCert(tr.adminCA)
	for name, c := range map[string]*x509.Certificate{"user's": userClient, "node zero's": servedClient} {
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: testNow, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("the %s client certificate does not chain to bootstrap.ign's %s: %v", name, adminCABundle, err)
		}
	}
	if err := bcrypt.CompareHashAndPassword(tr.hash, []byte(st.KubeadminPass)); err != nil {
		t.Errorf("the user's auth/kubeadmin-password does not match the kube-system/kubeadmin hash: %v", err)
	}
	want := st.KubeadminPass
	if hashOnly {
		want = ""
	}
	if got := string(files.Cluster[FileKubeadminPassword]); got != want {
		t.Errorf("kubeadmin-password = %q, want %q", got, want)
	}
}

// TestBuiltInUsesTheConfigImageCredentials: the built-in generator, given
// the config image's /opt/agent/tls, mints nothing of its own.
func TestBuiltInUsesTheConfigImageCredentials(t *testing.T) {
	st := configImageState(t)
	for _, hashOnly := range []bool{false, true} {
		name := map[bool]string{false: "hash and password", true: "hash only"}[hashOnly]
		t.Run(name, func(t *testing.T) {
			in := testInput(3, 2)
			in.TLSDir = tlsDir(t, st, hashOnly)
			files, err := Generate(context.Background(), in)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			checkOneSetOfCredentials(t, files, st, hashOnly)
			// The admin signer's key stays off every host.
			key := st.SignerKeyPEM[credentials.AdminSigner]
			configs := map[string][]byte{}
			for name, b := range files.Cluster {
				if strings.HasSuffix(name, ".ign") {
					configs[name] = b
				}
			}
			for id, b := range files.Hosts {
				configs[hostFileName(id)] = b
			}
			for name, b := range configs {
				for path, f := range filesOf(t, parseIgn(t, name, b)) {
					if strings.Contains(f.content, key) {
						t.Errorf("%s: %s carries the admin-kubeconfig-signer key", name, path)
					}
				}
			}
		})
	}
}

// TestBuiltInMintsWithoutTLSDir: a service started without a config image
// mints one set of the same form, and everything it lays down agrees.
func TestBuiltInMintsWithoutTLSDir(t *testing.T) {
	in := testInput(3, 0)
	in.TLSDir = ""
	files, err := Generate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	tr := trustOf(t, files)
	ca, client := kubeconfigParts(t, files.Cluster[FileKubeconfig])
	if !bytes.Equal(ca, tr.apiSigners) {
		t.Error("the kubeconfig's CA is not the kube-apiserver signers bootstrap.ign carries")
	}
	roots := x509.NewCertPool()
	roots.AddCert(tr.adminCA)
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: testNow, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not chain to the admin CA bundle: %v", err)
	}
	pw := files.Cluster[FileKubeadminPassword]
	if len(pw) != 23 || bcrypt.CompareHashAndPassword(tr.hash, pw) != nil {
		t.Errorf("kubeadmin-password %q does not match the secret's hash", pw)
	}
	// The check openshift-install's outputs get: it passes on these, and
	// notices one signer that is not in the CA data, or another admin
	// signer.
	other, err := otherState(t).TLS()
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]*credentials.Signer{credentials.AdminSigner: {Cert: tr.adminCA}}
	for rest, i := []byte(tr.apiSigners), 1; i < 4; i++ {
		var c *x509.Certificate
		c, rest = firstCert(t, rest)
		own[credentials.Signers[i]] = &credentials.Signer{Cert: c}
	}
	if err := checkKubeconfig(FileKubeconfig, files.Cluster[FileKubeconfig], &credentials.TLS{Signers: own}); err != nil {
		t.Errorf("checkKubeconfig against its own signers: %v", err)
	}
	for _, n := range []string{credentials.Signers[2], credentials.AdminSigner} {
		wrong := maps.Clone(own)
		wrong[n] = other.Signers[n]
		if err := checkKubeconfig(FileKubeconfig, files.Cluster[FileKubeconfig], &credentials.TLS{Signers: wrong}); err == nil || !strings.Contains(err.Error(), n) {
			t.Errorf("checkKubeconfig with another %s = %v, want an error naming it", n, err)
		}
	}
}

// firstCert parses the first PEM certificate of p and returns the rest.
func firstCert(t *testing.T, p []byte) (*x509.Certificate, []byte) {
	t.Helper()
	blk, rest := pem.Decode(p)
	if blk == nil {
		t.Fatalf("no PEM in %q", p)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c, rest
}

// TestBadTLSDir: a damaged override directory fails the preparation with
// the file named, whichever generator runs, before anything is made.
func TestBadTLSDir(t *testing.T) {
	st := configImageState(t)
	for _, gen := range []string{"built-in", "openshift-install"} {
		t.Run(gen, func(t *testing.T) {
			dir := tlsDir(t, st, false)
			if err := os.Remove(filepath.Join(dir, "kube-apiserver-localhost-signer.key")); err != nil {
				t.Fatal(err)
			}
			in := testInput(3, 0)
			if gen == "openshift-install" {
				exe, rec := writeStandIn(t, goodOutputs(), "")
				in = installerInput(t, exe)
				t.Cleanup(func() {
					if calls := readRec(t, rec, "calls"); strings.Contains(calls, "create") {
						t.Errorf("the installer was run on a bad directory:\n%s", calls)
					}
				})
			}
			in.TLSDir = dir
			_, err := Generate(context.Background(), in)
			want := filepath.Join(dir, "kube-apiserver-localhost-signer.key") + ": missing"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Generate = %v, want %q", err, want)
			}
		})
	}
}

// TestInstallerGetsTheOverrideDir: the payload's openshift-install (a
// stand-in) is given every regular file of the override directory in its
// tls/, mode 0600, and OPENSHIFT_INSTALL_LOAD_CLUSTER_CERTS=true on both
// create commands; it checks that itself and writes its outputs from
// them, as openshift-install does, and they pass the identity checks.
func TestInstallerGetsTheOverrideDir(t *testing.T) {
	st := configImageState(t)
	for _, hashOnly := range []bool{false, true} {
		name := map[bool]string{false: "hash and password", true: "hash only"}[hashOnly]
		t.Run(name, func(t *testing.T) {
			exe, rec := writeStandIn(t, loadingOutputs(), "")
			in := installerInput(t, exe)
			in.TLSDir = tlsDir(t, st, hashOnly)
			// A file openshift-install may know and we do not: copied too.
			if err := os.WriteFile(filepath.Join(in.TLSDir, "internal-release-registry-signer.crt"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(in.TLSDir, "not-a-file"), 0o700); err != nil {
				t.Fatal(err)
			}
			files, err := Generate(context.Background(), in)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			wantTLS := []string{"admin-kubeconfig-signer.crt", "admin-kubeconfig-signer.key", "internal-release-registry-signer.crt",
				"kube-apiserver-lb-signer.crt", "kube-apiserver-lb-signer.key", "kube-apiserver-localhost-signer.crt", "kube-apiserver-localhost-signer.key",
				"kube-apiserver-service-network-signer.crt", "kube-apiserver-service-network-signer.key", "kubeadmin-password", "kubeadmin-password.hash"}
			if hashOnly {
				wantTLS = slices.DeleteFunc(wantTLS, func(s string) bool { return s == "kubeadmin-password" })
			}
			if d := cmp.Diff(strings.Join(wantTLS, "\n")+"\n", readRec(t, rec, "tls-seen")); d != "" {
				t.Errorf("tls/ before create manifests (-want +got):\n%s", d)
			}
			if got := readRec(t, rec, "before-manifests"); got != "install-config.yaml\ntls\n" {
				t.Errorf("before create manifests the directory held %q, want install-config.yaml and tls", got)
			}
			calls := readRec(t, rec, "calls")
			for _, c := range strings.Split(strings.TrimSpace(calls), "\n") {
				wantLoad := "|load:true"
				if strings.HasPrefix(c, "argv:version") {
					wantLoad = "|load:"
				}
				if !strings.HasSuffix(c, wantLoad) {
					t.Errorf("call %q, want it to end %q", c, wantLoad)
				}
			}
			checkOneSetOfCredentials(t, files, st, hashOnly)
		})
	}
}

// TestInstallerThatIgnoresTheOverrideDir: an installer that mints its own
// credentials in spite of the flag fails the preparation, saying why,
// instead of installing a cluster the user's credentials do not open.
func TestInstallerThatIgnoresTheOverrideDir(t *testing.T) {
	st := configImageState(t)
	for _, tc := range []struct {
		name string
		edit func(standIn)
		want string
	}{
		{"own password", func(o standIn) { o["auth/kubeadmin-password"] = "Abcde-Fghij-Kmnop-Qrstu" },
			"auth/kubeadmin-password other than the cluster TLS directory's kubeadmin-password"},
		{"own signers", func(o standIn) { o["auth/kubeconfig"] = string(otherState(t).Kubeconfig("edge", "example.com")) },
			"certificate-authority-data lacks the cluster TLS directory's kube-apiserver-lb-signer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := loadingOutputs()
			tc.edit(out)
			exe, _ := writeStandIn(t, out, "")
			in := installerInput(t, exe)
			in.TLSDir = tlsDir(t, st, false)
			_, err := Generate(context.Background(), in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Generate = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), st.KubeadminPass) {
				t.Error("the error shows the kubeadmin password")
			}
		})
	}
}

var (
	otherOnce  sync.Once
	otherSt    *credentials.State
	otherStErr error
)

// otherState is a second, unrelated set of credentials.
func otherState(t *testing.T) *credentials.State {
	t.Helper()
	otherOnce.Do(func() { otherSt, otherStErr = credentials.New(nil, testNow) })
	if otherStErr != nil {
		t.Fatal(otherStErr)
	}
	return otherSt
}
