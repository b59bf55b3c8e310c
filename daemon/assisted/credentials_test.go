package assisted

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coreos/ignition/v2/config/v3_5"
	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"

	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/wire"
)

// preparedWithTLSDir installs a ready three-master cluster on a service
// whose ClusterTLSDir holds st's /opt/agent/tls files, answers every
// host's preparation checks and waits, by long-polling the agents'
// instructions, until the install files are made.
func preparedWithTLSDir(t *testing.T, st *credentials.State) (e *env, clusterID string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "opt", "agent", "tls")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range st.TLSFiles() {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e = newEnv(t, func(c *Config) { c.ClusterTLSDir, c.WorkDir = dir, t.TempDir() })
	p := clusterParams()
	p.OCPReleaseImage = testRelease
	clusterID, ie := e.cluster(p)
	var hosts []string
	for i := range 3 {
		hosts = append(hosts, e.addHost(ie, masterInv(t, "master-"+string(rune('0'+i)), 10+i)))
	}
	if _, err := e.s.InstallCluster(e.ctx, clusterID); err != nil {
		t.Fatalf("InstallCluster: %v", err)
	}
	for _, id := range hosts {
		steps := e.preparationSteps(ie, id)
		e.reply(ie, id, steps[wire.StepTypeInstallationDiskSpeedCheck], 0, wire.DiskSpeedCheckResponse{Path: validation.InstallationDiskKey(e.host(ie, id)), IOSyncDuration: 1})
		e.reply(ie, id, steps[wire.StepTypeContainerImageAvailability], 0, wire.ContainerImageAvailabilityResponse{Images: []*wire.ContainerImageAvailability{pulled(testRelease)}})
	}
	// Every host prepared: the cluster leaves preparing once the files
	// are stored, and an agent's held request wakes with its install step.
	for range 5 {
		c := e.getCluster(clusterID)
		if c.Status != wire.ClusterStatusPreparingForInstallation {
			break
		}
		if _, err := e.s.NextSteps(e.ctx, ie, hosts[0], e.clock.Now().Unix(), time.Minute, ""); err != nil {
			t.Fatal(err)
		}
	}
	if c := e.getCluster(clusterID); c.LastInstallationPreparation == nil || c.LastInstallationPreparation.Status != wire.LastInstallationPreparationStatusSuccess {
		t.Fatalf("cluster %s, preparation %+v; want the install files made", c.Status, c.LastInstallationPreparation)
	}
	return e, clusterID
}

// TestCredentialsAreTheConfigImages is issue #16 item 4 at the service:
// with the config image's /opt/agent/tls as its cluster TLS directory,
// GET /v2/clusters/{id}/credentials and downloads/credentials answer with
// the user's auth/kubeadmin-password, whose bcrypt hash is the one the
// install lays down; the kubeconfig served trusts the CA of the user's
// auth/kubeconfig and its client certificate chains to the same
// admin-kubeconfig-signer as the user's.
func TestCredentialsAreTheConfigImages(t *testing.T) {
	st, err := credentials.New(nil, newFakeClock().Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	e, id := preparedWithTLSDir(t, st)
	c := e.getCluster(id)
	userPassword := st.KubeadminPass
	userKubeconfig := st.Kubeconfig(c.Name, c.BaseDNSDomain)

	creds, err := e.s.Credentials(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if creds.Username != "kubeadmin" || creds.Password != userPassword {
		t.Errorf("credentials %s/%q, want kubeadmin and the user's auth/kubeadmin-password", creds.Username, creds.Password)
	}
	if pw, err := e.s.CredentialsFile(e.ctx, id, wire.FileKubeadminPassword); err != nil || string(pw) != userPassword {
		t.Errorf("downloads/credentials kubeadmin-password = %q (%v), want the user's", pw, err)
	}

	boot, err := e.s.ClusterFile(e.ctx, id, "bootstrap.ign")
	if err != nil {
		t.Fatal(err)
	}
	secret := ignitionFile(t, boot, "/opt/openshift/openshift/99_kubeadmin-password-secret.yaml")
	var doc struct {
		Data struct {
			Kubeadmin string `yaml:"kubeadmin"`
		} `yaml:"data"`
	}
	if err := yaml.Unmarshal(secret, &doc); err != nil {
		t.Fatal(err)
	}
	hash, err := base64.StdEncoding.DecodeString(doc.Data.Kubeadmin)
	if err != nil || bcrypt.CompareHashAndPassword(hash, []byte(userPassword)) != nil {
		t.Errorf("the install's kube-system/kubeadmin hash does not match the user's password (%v)", err)
	}

	served, err := e.s.CredentialsFile(e.ctx, id, wire.FileKubeconfigNoIngress)
	if err != nil {
		t.Fatal(err)
	}
	userCA, userClient := kubeconfigOf(t, userKubeconfig)
	servedCA, servedClient := kubeconfigOf(t, served)
	if string(userCA) != string(servedCA) {
		t.Error("the kubeconfig node zero serves has other CA data than the user's auth/kubeconfig")
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ignitionFile(t, boot, "/opt/openshift/tls/admin-kubeconfig-ca-bundle.crt"))
	for name, cert := range map[string]*x509.Certificate{"user's": userClient, "served": servedClient} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: e.clock.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("the %s client certificate does not chain to the admin CA bootstrap.ign carries: %v", name, err)
		}
	}
}

// kubeconfigOf decodes a kubeconfig's CA data and client certificate.
func kubeconfigOf(t *testing.T, kc []byte) ([]byte, *x509.Certificate) {
	t.Helper()
	cfg, err := kube.ParseKubeconfig(kc, "kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(cfg.CertData)
	if blk == nil {
		t.Fatalf("%s: no client certificate", "kubeconfig")
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.CAData, cert
}

// ignitionFile parses an Ignition config as Ignition does and returns the
// contents of the file at path (a data URL, as the built-in writes them).
func ignitionFile(t *testing.T, ign []byte, path string) []byte {
	t.Helper()
	cfg, rpt, err := v3_5.ParseCompatibleVersion(ign)
	if err != nil {
		t.Fatalf("Ignition does not parse: %v\n%s", err, rpt)
	}
	for _, f := range cfg.Storage.Files {
		if f.Path != path || f.Contents.Source == nil {
			continue
		}
		src := *f.Contents.Source
		data, ok := strings.CutPrefix(src, "data:;base64,")
		if !ok {
			t.Fatalf("%s: source %.40q is not a base64 data URL", path, src)
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Fatalf("the Ignition config has no %s", path)
	return nil
}
