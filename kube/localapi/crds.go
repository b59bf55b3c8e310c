package localapi

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nodezero/nodezero/kube"
)

// The CRDs are nodezero's own, for the simulated cluster: the fields of
// OpenShift's config.openshift.io/v1 ClusterVersion, ClusterOperator and
// Infrastructure the installer reads (status conditions, history,
// versions, the platform and the API's URLs), typed and
// validated by the API server; anything else is kept as sent. The printer
// columns are OpenShift's, so `kubectl get clusterversion` reads as `oc get`
// does.
//
//go:embed crds/*.json
var crdFiles embed.FS

const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// installCRDs creates the CRDs (an existing one is kept) and waits until
// the API serves them.
func installCRDs(ctx context.Context, c *kube.Client, timeout time.Duration) error {
	ents, err := crdFiles.ReadDir("crds")
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		b, err := crdFiles.ReadFile("crds/" + e.Name())
		if err != nil {
			return err
		}
		var crd map[string]any
		if err := json.Unmarshal(b, &crd); err != nil {
			return fmt.Errorf("crds/%s: %w", e.Name(), err)
		}
		name, _ := crd["metadata"].(map[string]any)["name"].(string)
		if err := c.Do(ctx, http.MethodPost, crdPath, crd, nil); err != nil && !errors.Is(err, kube.ErrAlreadyExists) {
			return fmt.Errorf("create CRD %s: %w", name, err)
		}
		names = append(names, name)
	}
	deadline := time.Now().Add(timeout)
	for _, name := range names {
		for {
			var crd struct {
				Status struct {
					Conditions []struct{ Type, Status, Message string } `json:"conditions"`
				} `json:"status"`
			}
			if err := c.Do(ctx, http.MethodGet, crdPath+"/"+name, nil, &crd); err != nil {
				return fmt.Errorf("read CRD %s: %w", name, err)
			}
			established := false
			for _, cond := range crd.Status.Conditions {
				if cond.Type == "Established" && cond.Status == "True" {
					established = true
				}
				if cond.Type == "NamesAccepted" && cond.Status == "False" {
					return fmt.Errorf("CRD %s: names not accepted: %s", name, cond.Message)
				}
			}
			if established {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s: not established after %s", name, timeout)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// createObjects creates the operators, then the ClusterVersion `version`
// (last, so that a controller waiting for it finds everything), each with
// its status set to an install under way. Objects that exist are left
// alone (a restarted sandbox keeps what its controller wrote).
func createObjects(ctx context.Context, c *kube.Client, cl Cluster, operators []string) error {
	now := kube.Now()
	for _, name := range operators {
		co, err := createOrGet(ctx, "ClusterOperator "+name, func() (*kube.ClusterOperator, error) {
			return c.CreateClusterOperator(ctx, &kube.ClusterOperator{Metadata: kube.ObjectMeta{Name: name}})
		})
		if err != nil {
			return err
		}
		if co == nil {
			continue
		}
		for _, cond := range []kube.Condition{
			{Type: kube.Available, Status: kube.False, Reason: "Installing", Message: "The cluster is being installed"},
			{Type: kube.Progressing, Status: kube.True, Reason: "Installing", Message: "Working towards " + cl.Version},
			{Type: kube.Degraded, Status: kube.False, Reason: "AsExpected"},
			{Type: kube.Upgradeable, Status: kube.True, Reason: "AsExpected"},
		} {
			cond.LastTransitionTime = now
			kube.SetCondition(&co.Status.Conditions, cond)
		}
		if _, err := c.UpdateClusterOperatorStatus(ctx, co); err != nil {
			return fmt.Errorf("ClusterOperator %s status: %w", name, err)
		}
	}
	cv, err := createOrGet(ctx, "ClusterVersion", func() (*kube.ClusterVersion, error) {
		return c.CreateClusterVersion(ctx, &kube.ClusterVersion{
			Metadata: kube.ObjectMeta{Name: kube.ClusterVersionName},
			Spec:     kube.ClusterVersionSpec{ClusterID: cl.ID},
		})
	})
	if err != nil {
		return err
	}
	if cv != nil {
		cv.Status = InstallingStatus(cl, now)
		if _, err := c.UpdateClusterVersionStatus(ctx, cv); err != nil {
			return fmt.Errorf("ClusterVersion status: %w", err)
		}
	}
	return nil
}

// createOrGet creates an object, retrying while the API does not serve the
// new CRD yet (404 for a moment after Established); it returns nil when
// the object exists already.
func createOrGet[T any](ctx context.Context, what string, create func() (*T, error)) (*T, error) {
	for range 50 {
		o, err := create()
		switch {
		case err == nil:
			return o, nil
		case errors.Is(err, kube.ErrAlreadyExists):
			return nil, nil
		case !errors.Is(err, kube.ErrNotFound):
			return nil, fmt.Errorf("create %s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("create %s: the API does not serve its resource", what)
}

// InstallingStatus is a ClusterVersion status for an install under way:
// the release desired, a Partial history entry, Available False and
// Progressing True ("Working towards <version>"), Failing False.
func InstallingStatus(cl Cluster, now kube.Time) kube.ClusterVersionStatus {
	st := kube.ClusterVersionStatus{
		Desired: kube.Release{Version: cl.Version, Image: cl.Image},
		History: []kube.UpdateHistory{{State: kube.UpdatePartial, StartedTime: now, Version: cl.Version, Image: cl.Image}},
	}
	for _, cond := range []kube.Condition{
		{Type: kube.Available, Status: kube.False},
		{Type: kube.Failing, Status: kube.False},
		{Type: kube.Progressing, Status: kube.True, Message: "Working towards " + cl.Version},
		{Type: kube.RetrievedUpdates, Status: kube.False, Reason: "NoChannel", Message: "The update channel has not been configured."},
	} {
		cond.LastTransitionTime = now
		kube.SetCondition(&st.Conditions, cond)
	}
	return st
}
