package controlplane

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/wire"
)

// Every v2 cluster status → the Installed and Available conditions and
// status.version, with the workload API answering or not.
func TestInstallConditions(t *testing.T) {
	type want struct {
		installed       metav1.ConditionStatus
		installedReason string // "" = not set by reportInstall
		available       metav1.ConditionStatus
		availableReason string
		version         bool
	}
	tests := []struct {
		status wire.ClusterStatus
		api    bool
		want   want
	}{
		{"", false, want{"", "", metav1.ConditionFalse, cpv1.InstallingReason, false}},
		{wire.ClusterStatusInsufficient, false, want{"", "", metav1.ConditionFalse, cpv1.InstallingReason, false}},
		{wire.ClusterStatusReady, false, want{"", "", metav1.ConditionFalse, cpv1.InstallingReason, false}},
		{wire.ClusterStatusPreparingForInstallation, false, want{metav1.ConditionFalse, cpv1.InstallingReason, metav1.ConditionFalse, cpv1.InstallingReason, false}},
		{wire.ClusterStatusInstalling, true, want{metav1.ConditionFalse, cpv1.InstallingReason, metav1.ConditionFalse, cpv1.InstallingReason, false}},
		{wire.ClusterStatusFinalizing, false, want{metav1.ConditionFalse, cpv1.InstallingReason, metav1.ConditionFalse, cpv1.NotAvailableReason, false}},
		{wire.ClusterStatusFinalizing, true, want{metav1.ConditionFalse, cpv1.InstallingReason, metav1.ConditionTrue, cpv1.AvailableReason, false}},
		{wire.ClusterStatusInstalled, false, want{metav1.ConditionTrue, cpv1.InstalledReason, metav1.ConditionFalse, cpv1.NotAvailableReason, true}},
		{wire.ClusterStatusInstalled, true, want{metav1.ConditionTrue, cpv1.InstalledReason, metav1.ConditionTrue, cpv1.AvailableReason, true}},
		{wire.ClusterStatusAddingHosts, true, want{metav1.ConditionTrue, cpv1.InstalledReason, metav1.ConditionTrue, cpv1.AvailableReason, true}},
		{wire.ClusterStatusError, true, want{metav1.ConditionFalse, cpv1.InstallFailedReason, metav1.ConditionFalse, cpv1.InstallingReason, false}},
		{wire.ClusterStatusCancelled, false, want{metav1.ConditionFalse, cpv1.InstallFailedReason, metav1.ConditionFalse, cpv1.InstallingReason, false}},
	}
	r := &Reconciler{}
	for _, tc := range tests {
		name := string(tc.status)
		if name == "" {
			name = "pending"
		}
		if tc.api {
			name += "/api"
		}
		t.Run(name, func(t *testing.T) {
			cp := &cpv1.NodezeroControlPlane{Spec: cpv1.NodezeroControlPlaneSpec{Version: "v1.33.4"}}
			v2 := &wire.Cluster{Status: tc.status, StatusInfo: "info"}
			r.reportInstall(cp, v2)
			r.reportAvailable(cp, v2, tc.api)
			inst := condition(cp, cpv1.InstalledCondition)
			switch {
			case tc.want.installedReason == "" && inst != nil:
				t.Errorf("Installed = %+v, want unset", inst)
			case tc.want.installedReason != "" && (inst == nil || inst.Status != tc.want.installed || inst.Reason != tc.want.installedReason):
				t.Errorf("Installed = %+v, want %s %s", inst, tc.want.installed, tc.want.installedReason)
			}
			if inst != nil && inst.Message != string(tc.status)+": info" {
				t.Errorf("Installed message = %q, want the v2 status and its info", inst.Message)
			}
			av := condition(cp, cpv1.AvailableCondition)
			if av == nil || av.Status != tc.want.available || av.Reason != tc.want.availableReason {
				t.Errorf("Available = %+v, want %s %s", av, tc.want.available, tc.want.availableReason)
			}
			if got := cp.Status.Version != ""; got != tc.want.version {
				t.Errorf("status.version = %q, want set %v", cp.Status.Version, tc.want.version)
			}
			if cp.Status.InstallState != string(tc.status) {
				t.Errorf("status.installState = %q, want %q", cp.Status.InstallState, tc.status)
			}
		})
	}
}

const serviceKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: ostest
  cluster:
    server: https://api.ostest.example.com:6443
    certificate-authority-data: %s
contexts:
- name: admin
  context:
    cluster: ostest
    user: admin
current-context: admin
users:
- name: admin
  user:
    token: sekret
`

// The service's kubeconfig is pointed at the Cluster's endpoint and told
// to verify the API's own name; an IP server needs no name.
func TestEndpointKubeconfig(t *testing.T) {
	kc := fmt.Sprintf(serviceKubeconfig, testCA(t))
	out, err := endpointKubeconfig([]byte(kc), clusterv1.APIEndpoint{Host: "192.0.2.5", Port: 6443})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kube.ParseKubeconfig(out, "out")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server != "https://192.0.2.5:6443" || cfg.TLSServerName != "api.ostest.example.com" || cfg.Token != "sekret" {
		t.Errorf("server %q tls-server-name %q token %q, want https://192.0.2.5:6443, api.ostest.example.com, the token kept", cfg.Server, cfg.TLSServerName, cfg.Token)
	}
	ip := []byte(strings.Replace(kc, "https://api.ostest.example.com:6443", "https://192.0.2.5:6443", 1))
	out, err = endpointKubeconfig(ip, clusterv1.APIEndpoint{Host: "192.0.2.5", Port: 6443})
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = kube.ParseKubeconfig(out, "out"); err != nil || cfg.TLSServerName != "" {
		t.Errorf("IP server: tls-server-name %q (err %v), want none", cfg.TLSServerName, err)
	}
}
