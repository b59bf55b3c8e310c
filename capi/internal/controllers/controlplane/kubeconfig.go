package controlplane

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/service"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/wire"
)

// KubeconfigSecretType and KubeconfigKey are the contract's kubeconfig
// secret's type and key.
const (
	KubeconfigSecretType = corev1.SecretType("cluster.x-k8s.io/secret")
	KubeconfigKey        = "value"
)

// readyTimeout bounds one /readyz through the kubeconfig: an API that does
// not answer must not hold the reconcile.
const readyTimeout = 10 * time.Second

// WorkloadAPI reaches the installed cluster's API with a kubeconfig.
type WorkloadAPI interface {
	// Ready returns nil once GET /readyz answers ok.
	Ready(ctx context.Context, kubeconfig []byte) error
	// ClusterInfo reads what a day-2 import needs (kube.ReadClusterInfo);
	// arch stands in when no control-plane Node gives the architecture.
	ClusterInfo(ctx context.Context, kubeconfig []byte, arch string) (*kube.ClusterInfo, error)
}

// KubeAPI is the WorkloadAPI of the main module's kube package.
type KubeAPI struct{}

func kubeClient(kubeconfig []byte) (*kube.Client, error) {
	cfg, err := kube.ParseKubeconfig(kubeconfig, "kubeconfig secret")
	if err != nil {
		return nil, err
	}
	return kube.NewClient(cfg, kube.WithTimeout(readyTimeout))
}

// Ready implements WorkloadAPI.
func (KubeAPI) Ready(ctx context.Context, kubeconfig []byte) error {
	c, err := kubeClient(kubeconfig)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return c.Ready(ctx)
}

// ClusterInfo implements WorkloadAPI.
func (KubeAPI) ClusterInfo(ctx context.Context, kubeconfig []byte, arch string) (*kube.ClusterInfo, error) {
	c, err := kubeClient(kubeconfig)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return kube.ReadClusterInfo(ctx, c, arch)
}

// KubeconfigSecretName is the contract's <cluster>-kubeconfig.
func KubeconfigSecretName(cluster *clusterv1.Cluster) string { return cluster.Name + "-kubeconfig" }

// reconcileKubeconfig writes <cluster>-kubeconfig once the service has the
// cluster's admin kubeconfig (kubeconfig, else kubeconfig-noingress), its
// server pointed at the Cluster's controlPlaneEndpoint and told to verify
// the original name (api.<cluster>.<domain> need not resolve from here),
// and sets controlPlaneInitialized once /readyz answers through it. It
// reports whether the API answered.
func (r *Reconciler) reconcileKubeconfig(ctx context.Context, s *scope, v2 *wire.Cluster) (bool, error) {
	cp := s.cp
	if !installingStatus(v2.Status) && !installedStatus(v2.Status) {
		return false, nil
	}
	var raw []byte
	var err error
	for _, f := range []string{wire.FileKubeconfig, wire.FileKubeconfigNoIngress} {
		raw, err = s.svc.User.DownloadClusterCredentials(ctx, v2.ID, f)
		if err == nil {
			break
		}
	}
	if err != nil {
		if code := wire.StatusCode(err); code >= 400 && code < 500 {
			return false, nil // not made yet: the preparation makes it
		}
		return false, fmt.Errorf("nodezerocontrolplane %s/%s: %w", cp.Namespace, cp.Name, err)
	}
	value, err := endpointKubeconfig(raw, s.cluster.Spec.ControlPlaneEndpoint)
	if err != nil {
		return false, fmt.Errorf("nodezerocontrolplane %s/%s: the service's kubeconfig of cluster %s: %w", cp.Namespace, cp.Name, v2.ID, err)
	}
	if err := r.writeKubeconfigSecret(ctx, s, value); err != nil {
		return false, err
	}
	if err := r.workload().Ready(ctx, value); err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("the workload API does not answer yet", "err", err)
		return false, nil
	}
	t := true
	cp.Status.Initialization.ControlPlaneInitialized = &t
	return true, nil
}

// endpointKubeconfig points the kubeconfig's server at the endpoint, with
// tls-server-name the original server's host.
func endpointKubeconfig(raw []byte, ep clusterv1.APIEndpoint) ([]byte, error) {
	cfg, err := kube.ParseKubeconfig(raw, "kubeconfig")
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.Server)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", cfg.Server, err)
	}
	name := cfg.TLSServerName
	if name == "" {
		name = u.Hostname()
	}
	server := "https://" + net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
	if net.ParseIP(name) != nil || name == ep.Host {
		name = "" // an address is verified as itself
	}
	return kube.SetServer(raw, "kubeconfig", server, name)
}

// writeKubeconfigSecret creates or updates <cluster>-kubeconfig: type
// cluster.x-k8s.io/secret, the cluster-name label, key value, a
// controller owner reference to the control plane.
func (r *Reconciler) writeKubeconfigSecret(ctx context.Context, s *scope, value []byte) error {
	cp := s.cp
	key := client.ObjectKey{Namespace: cp.Namespace, Name: KubeconfigSecretName(s.cluster)}
	var have corev1.Secret
	err := r.Client.Get(ctx, key, &have)
	if apierrors.IsNotFound(err) {
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Labels:          map[string]string{clusterv1.ClusterNameLabel: s.cluster.Name},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cp, cpv1.GroupVersion.WithKind("NodezeroControlPlane"))}},
			Type: KubeconfigSecretType,
			Data: map[string][]byte{KubeconfigKey: value},
		}
		if err := r.Client.Create(ctx, sec); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("nodezerocontrolplane %s/%s: create secret %s: %w", cp.Namespace, cp.Name, key.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("kubeconfig secret written", "secret", key.Name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("nodezerocontrolplane %s/%s: secret %s: %w", cp.Namespace, cp.Name, key.Name, err)
	}
	if ref := metav1.GetControllerOf(&have); ref == nil || ref.UID != cp.UID {
		return fmt.Errorf("nodezerocontrolplane %s/%s: secret %s exists and is not this control plane's (no controller reference to it)", cp.Namespace, cp.Name, key.Name)
	}
	if bytes.Equal(have.Data[KubeconfigKey], value) && have.Labels[clusterv1.ClusterNameLabel] == s.cluster.Name {
		return nil
	}
	orig := have.DeepCopy()
	if have.Labels == nil {
		have.Labels = map[string]string{}
	}
	have.Labels[clusterv1.ClusterNameLabel] = s.cluster.Name
	if have.Data == nil {
		have.Data = map[string][]byte{}
	}
	have.Data[KubeconfigKey] = value
	if err := r.Client.Patch(ctx, &have, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("nodezerocontrolplane %s/%s: update secret %s: %w", cp.Namespace, cp.Name, key.Name, err)
	}
	return nil
}

// ensureDay2Cluster imports the installed cluster as the day-2 cluster
// later Machines join through (docs/capi.md §6): its facts read through the
// kubeconfig as the node-joiner reads them, an AddHostsCluster with its
// openshift_cluster_id found or imported, its worker ignition endpoint
// set.
func (r *Reconciler) ensureDay2Cluster(ctx context.Context, s *scope) error {
	cp := s.cp
	c := s.svc.User
	if id := cp.Status.Day2ClusterID; id != "" {
		_, err := c.GetClusterExcludingHosts(ctx, id)
		if err == nil {
			return nil
		}
		if !wire.IsStatus(err, 404) {
			return fmt.Errorf("nodezerocontrolplane %s/%s: status.day2ClusterID %s: %w", cp.Namespace, cp.Name, id, err)
		}
		cp.Status.Day2ClusterID = ""
	}
	sec, err := service.SecretValue(ctx, r.Client, cp.Namespace, KubeconfigSecretName(s.cluster), KubeconfigKey)
	if err != nil {
		return err
	}
	// The day-1 cluster's architecture stands in for a control-plane
	// Node's, which a cluster whose Nodes have not registered yet lacks.
	var arch string
	if day1, err := c.GetClusterExcludingHosts(ctx, cp.Status.ClusterID); err == nil {
		arch = string(day1.CPUArchitecture)
	}
	ci, err := r.workload().ClusterInfo(ctx, sec, arch)
	if err != nil {
		return fmt.Errorf("nodezerocontrolplane %s/%s: day-2 import: %w", cp.Namespace, cp.Name, err)
	}
	list, err := c.ListClusters(ctx)
	if err != nil {
		return fmt.Errorf("nodezerocontrolplane %s/%s: %w", cp.Namespace, cp.Name, err)
	}
	var cl *wire.Cluster
	for _, x := range list {
		if x != nil && x.Kind == wire.ClusterKindAddHostsCluster && x.OpenshiftClusterID == ci.ClusterID {
			cl = x
			break
		}
	}
	if cl == nil {
		name, dns, id := ci.ClusterName, ci.APIDNSName, ci.ClusterID
		if cl, err = c.ImportCluster(ctx, wire.ImportClusterParams{Name: &name, APIVipDnsname: &dns, OpenshiftClusterID: &id,
			OpenshiftVersion: ci.Version}); err != nil {
			return fmt.Errorf("nodezerocontrolplane %s/%s: %w", cp.Namespace, cp.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("day-2 cluster imported", "cluster", cl.ID, "openshift_cluster_id", ci.ClusterID)
	}
	if update, ok := day2Update(cl, ci); ok {
		if _, err := c.UpdateCluster(ctx, cl.ID, update); err != nil {
			return fmt.Errorf("nodezerocontrolplane %s/%s: day-2 cluster %s: %w", cp.Namespace, cp.Name, cl.ID, err)
		}
	}
	cp.Status.Day2ClusterID = cl.ID
	return nil
}

// day2Update is what the imported cluster lacks of the installed
// cluster's facts: its networking mode and the worker pool's ignition
// endpoint (as daemon/register's add-nodes import sends them).
func day2Update(cl *wire.Cluster, ci *kube.ClusterInfo) (wire.V2ClusterUpdateParams, bool) {
	var p wire.V2ClusterUpdateParams
	need := false
	if umn := ci.UserManagedNetworking; cl.UserManagedNetworking == nil || *cl.UserManagedNetworking != umn {
		p.UserManagedNetworking, need = &umn, true
	}
	if ep := ci.WorkerIgnition; ep != nil && ep.URL != "" {
		have := cl.IgnitionEndpoint
		if have == nil || deref(have.URL) != ep.URL || deref(have.CACertificate) != ep.CACertificate {
			u, ca := ep.URL, ep.CACertificate
			p.IgnitionEndpoint = &wire.IgnitionEndpoint{URL: &u}
			if ca != "" {
				p.IgnitionEndpoint.CACertificate = &ca
			}
			need = true
		}
	}
	return p, need
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
