package contract

import (
	"context"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/contract"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	infrav1 "github.com/nodezero/nodezero/capi/api/infrastructure/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/testenv"
)

// ourKinds are the kinds of nodezero's three API groups in the scheme
// (List kinds apart).
func ourKinds(t *testing.T, env *testenv.Env) []schema.GroupVersionKind {
	t.Helper()
	var out []schema.GroupVersionKind
	for _, gv := range []schema.GroupVersion{bootstrapv1.GroupVersion, cpv1.GroupVersion, infrav1.GroupVersion} {
		for kind := range env.Scheme.KnownTypes(gv) {
			if strings.HasSuffix(kind, "List") || !strings.HasPrefix(kind, "Nodezero") {
				continue
			}
			out = append(out, gv.WithKind(kind))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	if len(out) < 6 {
		t.Fatalf("the scheme knows %d nodezero kinds (%v), want at least 6", len(out), out)
	}
	return out
}

// TestCRDsFollowTheContract: each of nodezero's kinds is served by a CRD
// named as CAPI computes it (contract.CalculateCRDName, which is how CAPI
// finds a referenced kind's contract), labelled with the contract version
// v1beta2 → v1alpha1, namespaced, served and stored as v1alpha1 with a
// status subresource (templates excepted); its List kind lists; a
// template's schema has spec.template.{metadata,spec}; the control plane
// has the scale subresource on the contract's paths.
func TestCRDsFollowTheContract(t *testing.T) {
	t.Parallel()
	env := testenv.Shared(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	for _, gvk := range ourKinds(t, env) {
		t.Run(gvk.Kind, func(t *testing.T) {
			name := contract.CalculateCRDName(gvk.Group, gvk.Kind)
			var crd apiextensionsv1.CustomResourceDefinition
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
				t.Fatalf("CRD %s (contract.CalculateCRDName(%q, %q)): %v", name, gvk.Group, gvk.Kind, err)
			}
			if got := crd.Labels[clusterv1.GroupVersion.String()]; got != gvk.Version {
				t.Errorf("CRD %s label %s = %q, want %q", name, clusterv1.GroupVersion.String(), got, gvk.Version)
			}
			if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
				t.Errorf("CRD %s scope = %s, want Namespaced", name, crd.Spec.Scope)
			}
			if crd.Spec.Names.ListKind != gvk.Kind+"List" {
				t.Errorf("CRD %s listKind = %q, want %q", name, crd.Spec.Names.ListKind, gvk.Kind+"List")
			}
			established := false
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					established = true
				}
			}
			if !established {
				t.Errorf("CRD %s is not established: %+v", name, crd.Status.Conditions)
			}
			var v *apiextensionsv1.CustomResourceDefinitionVersion
			for i := range crd.Spec.Versions {
				if crd.Spec.Versions[i].Name == gvk.Version {
					v = &crd.Spec.Versions[i]
				}
			}
			if v == nil || !v.Served || !v.Storage {
				t.Fatalf("CRD %s: version %s not served and stored: %+v", name, gvk.Version, crd.Spec.Versions)
			}
			template := strings.HasSuffix(gvk.Kind, "Template")
			if !template && (v.Subresources == nil || v.Subresources.Status == nil) {
				t.Errorf("CRD %s: no status subresource", name)
			}
			if template {
				spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
				tmpl, ok := spec.Properties["template"]
				if !ok {
					t.Fatalf("CRD %s: no spec.template in the schema", name)
				}
				for _, field := range []string{"metadata", "spec"} {
					if _, ok := tmpl.Properties[field]; !ok {
						t.Errorf("CRD %s: no spec.template.%s in the schema", name, field)
					}
				}
				if !contains(spec.Required, "template") {
					t.Errorf("CRD %s: spec.template is not required (required: %v)", name, spec.Required)
				}
			}
			if gvk.Kind == "NodezeroControlPlane" {
				sc := v.Subresources.Scale
				if sc == nil {
					t.Fatalf("CRD %s: no scale subresource", name)
				}
				if sc.SpecReplicasPath != ".spec.replicas" || sc.StatusReplicasPath != ".status.replicas" || sc.LabelSelectorPath == nil || *sc.LabelSelectorPath != ".status.selector" {
					t.Errorf("CRD %s: scale subresource %+v, want .spec.replicas, .status.replicas, .status.selector", name, sc)
				}
			}
			list, err := env.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err != nil {
				t.Fatalf("%sList not in the scheme: %v", gvk.Kind, err)
			}
			if err := env.Client.List(ctx, list.(client.ObjectList), client.InNamespace(ns)); err != nil {
				t.Errorf("list %s: %v", gvk.Kind, err)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
