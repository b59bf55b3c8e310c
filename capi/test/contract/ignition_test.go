package contract

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	ignv32 "github.com/coreos/ignition/v2/config/v3_2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
)

// TestIgnitionFormat: a worker whose NodezeroConfigTemplate asks for
// format Ignition gets a data secret in the contract's shape whose value
// coreos/ignition parses (spec 3.2) without a warning, format "ignition",
// and whose files are the config image's members: the rendezvous
// environment naming the service and the Machine's infra-env, and the
// machine binding.
func TestIgnitionFormat(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	s.cluster(s.singleNode(), unusedEndpoint())
	s.workersWith("workers", 1, bootstrapv1.NodezeroConfigSpec{Format: bootstrapv1.FormatIgnition})
	m := s.dataReady("Ignition worker with bootstrap data", 1, workerMachines())[0]
	cfg, err := s.config(&m)
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{}
	if err := s.get(sec, cfg.Status.DataSecretName); err != nil {
		t.Fatal(err)
	}
	if f := string(sec.Data["format"]); f != "ignition" {
		t.Errorf("data secret %s: format %q, want ignition", sec.Name, f)
	}
	if sec.Type != clusterv1.ClusterSecretType || sec.Labels[clusterv1.ClusterNameLabel] != clusterName || metav1.GetControllerOf(sec) == nil {
		t.Errorf("data secret %s: type %q, labels %v, controller %v: not the contract's shape", sec.Name, sec.Type, sec.Labels, metav1.GetControllerOf(sec))
	}
	ign, rpt, err := ignv32.Parse(sec.Data["value"])
	if err != nil || len(rpt.Entries) > 0 {
		t.Fatalf("data secret %s: coreos/ignition 3.2 parse: %v; report %s", sec.Name, err, rpt.String())
	}
	files := map[string]string{}
	for _, f := range ign.Storage.Files {
		src := ""
		if f.Contents.Source != nil {
			src = *f.Contents.Source
		}
		files[f.Path] = decodeDataURL(t, f.Path, src)
	}
	env, ok := files["/etc/assisted/rendezvous-host.env"]
	if !ok {
		t.Fatalf("Ignition files %v: no /etc/assisted/rendezvous-host.env", keys(files))
	}
	for _, want := range []string{"SERVICE_BASE_URL=" + s.svc.URL, "INFRA_ENV_ID=" + cfg.Status.InfraEnvID} {
		if !strings.Contains(env, want) {
			t.Errorf("rendezvous-host.env %q lacks %q", env, want)
		}
	}
	if b, ok := files[bootstrapv1.MachineBindingPath]; !ok || !strings.Contains(b, m.Name) {
		t.Errorf("Ignition file %s = %q (present %v), want the machine binding naming %s", bootstrapv1.MachineBindingPath, b, ok, m.Name)
	}
}

// decodeDataURL is a data: URL's contents (base64 or percent-encoded).
func decodeDataURL(t *testing.T, path, src string) string {
	t.Helper()
	meta, data, ok := strings.Cut(strings.TrimPrefix(src, "data:"), ",")
	if !strings.HasPrefix(src, "data:") || !ok {
		t.Fatalf("Ignition file %s: source %.40q is not a data URL", path, src)
	}
	if strings.HasSuffix(meta, ";base64") {
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatalf("Ignition file %s: %v", path, err)
		}
		return string(b)
	}
	v, err := url.PathUnescape(data)
	if err != nil {
		t.Fatalf("Ignition file %s: %v", path, err)
	}
	return v
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
