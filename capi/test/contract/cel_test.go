package contract

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/test/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/testenv"
)

// validControlPlane is a NodezeroControlPlane the apiserver accepts: three
// replicas with one API and one ingress VIP.
func validControlPlane(ns, name string) *cpv1.NodezeroControlPlane {
	three := int32(3)
	return &cpv1.NodezeroControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: cpv1.NodezeroControlPlaneSpec{
			Replicas:            &three,
			Version:             "v1.31.0",
			DistributionVersion: "4.18.0",
			MachineTemplate: cpv1.NodezeroControlPlaneMachineTemplate{Spec: cpv1.NodezeroControlPlaneMachineTemplateSpec{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: builder.InfrastructureGroupVersion.Group, Kind: builder.GenericInfrastructureMachineTemplateKind, Name: "cp",
				},
			}},
			Cluster: cpv1.ClusterInputs{
				BaseDomain:    "example.com",
				PullSecretRef: cpv1.SecretRef{Name: "pull"},
				APIVIPs:       []string{"192.0.2.5"},
				IngressVIPs:   []string{"192.0.2.6"},
			},
			ServiceRef: cpv1.ServiceRef{URL: "http://127.0.0.1:8090", TokenSecretRef: cpv1.SecretRef{Name: "tokens"}},
		},
	}
}

// rejected checks that err is the apiserver's Invalid naming field, with
// a cause that says msg.
func rejected(t *testing.T, err error, field, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want rejected at %s (%q)", field, msg)
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) || !apierrors.IsInvalid(err) {
		t.Fatalf("error %v; want the apiserver's Invalid at %s", err, field)
	}
	var causes []string
	if se.ErrStatus.Details != nil {
		for _, c := range se.ErrStatus.Details.Causes {
			if c.Field == field && strings.Contains(c.Message, msg) {
				// A rule that fails to evaluate ("no such key") is
				// reported with its message too: that is a broken rule,
				// not a refusal.
				if strings.Contains(c.Message, "evaluating rule") {
					t.Errorf("cause at %s is a rule that did not evaluate: %s", field, c.Message)
				}
				return
			}
			causes = append(causes, c.Field+": "+c.Message)
		}
	}
	t.Errorf("error %q: no cause at %s saying %q; causes: %q", err, field, msg, causes)
}

// TestControlPlaneRulesOnCreate: the schema and CEL rules of
// NodezeroControlPlane refuse bad specs at create, naming the field.
func TestControlPlaneRulesOnCreate(t *testing.T) {
	t.Parallel()
	env := testenv.Shared(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	for _, tc := range []struct {
		name   string
		mutate func(*cpv1.NodezeroControlPlane)
		field  string
		msg    string
	}{
		{"two replicas", func(cp *cpv1.NodezeroControlPlane) { two := int32(2); cp.Spec.Replicas = &two },
			"spec.replicas", "control-plane replicas must be 1, 3, 4 or 5"},
		{"six replicas", func(cp *cpv1.NodezeroControlPlane) { six := int32(6); cp.Spec.Replicas = &six },
			"spec.replicas", "control-plane replicas must be 1, 3, 4 or 5"},
		{"single node with VIPs", func(cp *cpv1.NodezeroControlPlane) { one := int32(1); cp.Spec.Replicas = &one },
			"spec", "a single-node control plane (replicas 1) has no VIPs"},
		{"API VIPs but no ingress VIPs", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.Cluster.IngressVIPs = nil },
			"spec.cluster", "apiVIPs and ingressVIPs must have as many addresses"},
		{"two API VIPs, one ingress VIP", func(cp *cpv1.NodezeroControlPlane) {
			cp.Spec.Cluster.APIVIPs = []string{"192.0.2.5", "2001:db8::5"}
		}, "spec.cluster", "apiVIPs and ingressVIPs must have as many addresses"},
		{"VIP not an address", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.Cluster.APIVIPs = []string{"api.example.com"} },
			"spec.cluster.apiVIPs[0]", "must be an IP address"},
		{"ingress VIP not an address", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.Cluster.IngressVIPs = []string{"192.0.2.300"} },
			"spec.cluster.ingressVIPs[0]", "must be an IP address"},
		{"machine network not a CIDR", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.Cluster.MachineNetworks = []string{"192.0.2.0"} },
			"spec.cluster.machineNetworks[0]", "must be a CIDR"},
		{"service URL not http", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.ServiceRef.URL = "ftp://127.0.0.1:8090" },
			"spec.serviceRef.url", "must be an http or https URL"},
		{"service URL not a URL", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.ServiceRef.URL = "http://[::1" },
			"spec.serviceRef.url", "must be an http or https URL"},
		{"version not a semver", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.Version = "latest" },
			"spec.version", "should match"},
		{"distribution version not a version", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.DistributionVersion = "four" },
			"spec.distributionVersion", "should match"},
		{"base domain with capitals", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.Cluster.BaseDomain = "Example.COM" },
			"spec.cluster.baseDomain", "should match"},
		{"cluster name with a dot", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.Cluster.ClusterName = "a.b" },
			"spec.cluster.clusterName", "should match"},
		{"no pull secret name", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.Cluster.PullSecretRef.Name = "" },
			"spec.cluster.pullSecretRef.name", "should be at least 1 chars long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := validControlPlane(ns, "cp-"+strings.ReplaceAll(tc.name, " ", "-"))
			tc.mutate(cp)
			rejected(t, env.Client.Create(ctx, cp), tc.field, tc.msg)
		})
	}
	// The baseline itself is accepted (else every case above proves
	// nothing), and so is a single node without VIPs.
	if err := env.Client.Create(ctx, validControlPlane(ns, "valid")); err != nil {
		t.Fatalf("valid control plane refused: %v", err)
	}
	sno := validControlPlane(ns, "valid-sno")
	one := int32(1)
	sno.Spec.Replicas, sno.Spec.Cluster.APIVIPs, sno.Spec.Cluster.IngressVIPs = &one, nil, nil
	if err := env.Client.Create(ctx, sno); err != nil {
		t.Fatalf("valid single-node control plane refused: %v", err)
	}
}

// TestControlPlaneRulesOnUpdate: the cluster's inputs and the
// distribution version cannot change once set; replicas and version can.
func TestControlPlaneRulesOnUpdate(t *testing.T) {
	t.Parallel()
	env := testenv.Shared(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	cp := validControlPlane(ns, "cp")
	if err := env.Client.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*cpv1.NodezeroControlPlane)
		field  string
		msg    string
	}{
		{"base domain", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.Cluster.BaseDomain = "example.org" },
			"spec.cluster", "cluster inputs are immutable"},
		{"VIPs", func(cp *cpv1.NodezeroControlPlane) {
			cp.Spec.Cluster.APIVIPs, cp.Spec.Cluster.IngressVIPs = []string{"192.0.2.7"}, []string{"192.0.2.8"}
		}, "spec.cluster", "cluster inputs are immutable"},
		{"pull secret", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.Cluster.PullSecretRef.Name = "other" },
			"spec.cluster", "cluster inputs are immutable"},
		{"distribution version", func(cp *cpv1.NodezeroControlPlane) { cp.Spec.DistributionVersion = "4.19.0" },
			"spec", "distributionVersion is immutable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := &cpv1.NodezeroControlPlane{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cp), have); err != nil {
				t.Fatal(err)
			}
			orig := have.DeepCopy()
			tc.mutate(have)
			rejected(t, env.Client.Patch(ctx, have, client.MergeFrom(orig)), tc.field, tc.msg)
		})
	}
	have := &cpv1.NodezeroControlPlane{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cp), have); err != nil {
		t.Fatal(err)
	}
	orig := have.DeepCopy()
	five := int32(5)
	have.Spec.Replicas = &five
	if err := env.Client.Patch(ctx, have, client.MergeFrom(orig)); err != nil {
		t.Errorf("replicas 3 → 5 refused: %v", err)
	}
}

// TestConfigRules: a NodezeroConfig's spec is checked (format enum, MACs)
// and immutable; a template's spec.template.spec carries the same rules.
func TestConfigRules(t *testing.T) {
	t.Parallel()
	env := testenv.Shared(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	cfg := func(name string) *bootstrapv1.NodezeroConfig {
		return &bootstrapv1.NodezeroConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: bootstrapv1.NodezeroConfigSpec{
			Interfaces: []bootstrapv1.Interface{{Name: "eth0", MACAddress: "52:54:00:00:00:01"}},
		}}
	}
	t.Run("bad format", func(t *testing.T) {
		c := cfg("bad-format")
		c.Spec.Format = "Cloud-Init"
		rejected(t, env.Client.Create(ctx, c), "spec.format", "Unsupported value")
	})
	t.Run("bad MAC", func(t *testing.T) {
		c := cfg("bad-mac")
		c.Spec.Interfaces[0].MACAddress = "52:54:00:00:00"
		rejected(t, env.Client.Create(ctx, c), "spec.interfaces[0].macAddress", "should match")
	})
	t.Run("interface name too long", func(t *testing.T) {
		c := cfg("bad-name")
		c.Spec.Interfaces[0].Name = "a-very-long-interface-name"
		rejected(t, env.Client.Create(ctx, c), "spec.interfaces[0].name", "may not be more than 15")
	})
	t.Run("template bad MAC", func(t *testing.T) {
		tmpl := &bootstrapv1.NodezeroConfigTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-mac"}}
		tmpl.Spec.Template.Spec.Interfaces = []bootstrapv1.Interface{{Name: "eth0", MACAddress: "zz:54:00:00:00:01"}}
		rejected(t, env.Client.Create(ctx, tmpl), "spec.template.spec.interfaces[0].macAddress", "should match")
	})
	t.Run("immutable", func(t *testing.T) {
		c := cfg("immutable")
		if err := env.Client.Create(ctx, c); err != nil {
			t.Fatalf("valid config refused: %v", err)
		}
		if c.Spec.Format != bootstrapv1.FormatConfigImage {
			t.Errorf("spec.format defaulted to %q, want %q", c.Spec.Format, bootstrapv1.FormatConfigImage)
		}
		orig := c.DeepCopy()
		c.Spec.AdditionalNTPSources = []string{"ntp.example.com"}
		rejected(t, env.Client.Patch(ctx, c, client.MergeFrom(orig)), "spec", "spec is immutable")
	})
}
