package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/kube"
)

// checkOneSetOfCredentials is issue #16 item 4 end to end: `create
// config-image` wrote installDir/auth/, the hosts loaded the config image,
// and node zero installed from its /opt/agent/tls. The password node zero
// serves (GET /clusters/{id}/credentials) is the user's
// auth/kubeadmin-password; the kubeconfig it serves (served) trusts the
// CA data of the user's auth/kubeconfig, and its client certificate
// chains to the same admin-kubeconfig-signer as the user's (node zero has
// that signer, not the user's client key: openshift-install issues a new
// client certificate from the loaded signer too).
func checkOneSetOfCredentials(t *testing.T, installDir, servedPassword string, served []byte) {
	t.Helper()
	pw, err := os.ReadFile(filepath.Join(installDir, "auth", "kubeadmin-password"))
	if err != nil {
		t.Fatal(err)
	}
	if servedPassword != string(pw) {
		t.Error("GET credentials answers with another kubeadmin password than the user's auth/kubeadmin-password")
	}
	user, err := os.ReadFile(filepath.Join(installDir, "auth", "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	userCA, userClient := kubeconfigCAAndClient(t, "auth/kubeconfig", user)
	servedCA, servedClient := kubeconfigCAAndClient(t, "kubeconfig-noingress", served)
	if !bytes.Equal(userCA, servedCA) {
		t.Error("the kubeconfig node zero serves has other CA data than the user's auth/kubeconfig")
	}
	// The admin-kubeconfig-signer create config-image kept in the
	// install directory's state and shipped in the image.
	b, err := os.ReadFile(filepath.Join(installDir, stateFile))
	if err != nil {
		t.Fatal(err)
	}
	st, err := credentials.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	tls, err := st.TLS()
	if err != nil {
		t.Fatal(err)
	}
	signer := tls.Signers[credentials.AdminSigner].Cert
	for name, c := range map[string]*x509.Certificate{"the user's": userClient, "node zero's": servedClient} {
		if err := c.CheckSignatureFrom(signer); err != nil {
			t.Errorf("%s admin client certificate is not signed by the config image's %s: %v", name, credentials.AdminSigner, err)
		}
	}
}

func kubeconfigCAAndClient(t *testing.T, name string, kc []byte) ([]byte, *x509.Certificate) {
	t.Helper()
	cfg, err := kube.ParseKubeconfig(kc, name)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(cfg.CertData)
	if blk == nil {
		t.Fatalf("%s: no client certificate", name)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.CAData, cert
}
