package controlplane

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/service"
	"github.com/nodezero/nodezero/daemon/register"
	"github.com/nodezero/nodezero/wire"
)

// PullSecretKey is the pull secret's key (a kubernetes.io/dockerconfigjson
// secret's).
const PullSecretKey = ".dockerconfigjson"

// Tag is the v2 cluster's tag naming the object that made it: a lost
// status.clusterID finds the cluster again by it instead of making a
// second one. assisted-service allows letters, digits and underscores in a
// tag, so the object's UID is written with underscores.
func Tag(cp *cpv1.NodezeroControlPlane) string {
	return "nodezero_capi_" + strings.ReplaceAll(string(cp.UID), "-", "_")
}

// ClusterName is the OpenShift cluster's name: spec.cluster.clusterName,
// else the Cluster's.
func ClusterName(cp *cpv1.NodezeroControlPlane, cluster *clusterv1.Cluster) string {
	if n := cp.Spec.Cluster.ClusterName; n != "" {
		return n
	}
	return cluster.Name
}

// ensureCluster returns the object's v2 cluster, making it when neither
// status.clusterID nor the tag finds one. A nil cluster with a nil error
// means: wait (the result says how long).
func (r *Reconciler) ensureCluster(ctx context.Context, s *scope) (*wire.Cluster, ctrl.Result, error) {
	cp := s.cp
	c := s.svc.User
	if id := cp.Status.ClusterID; id != "" {
		cl, err := c.GetClusterExcludingHosts(ctx, id)
		switch {
		case err == nil:
			return cl, ctrl.Result{}, nil
		case !wire.IsStatus(err, 404):
			r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.ServiceUnreachableReason, err.Error())
			return nil, ctrl.Result{}, fmt.Errorf("nodezerocontrolplane %s/%s: status.clusterID %s: %w", cp.Namespace, cp.Name, id, err)
		case startedStatus(wire.ClusterStatus(cp.Status.InstallState)):
			// The service lost a cluster that was installing or
			// installed: a new one would install the hosts again.
			msg := fmt.Sprintf("status.clusterID %s: the service has no such cluster any more, and it was %s; delete the object to start over", id, cp.Status.InstallState)
			r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.InstallFailedReason, msg)
			return nil, ctrl.Result{RequeueAfter: r.waitInterval()}, nil
		}
		ctrl.LoggerFrom(ctx).Info("the v2 cluster is gone from the service; looking it up by tag", "cluster", id)
		cp.Status.ClusterID = ""
	}
	tag := Tag(cp)
	list, err := c.ListClusters(ctx)
	if err != nil {
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.ServiceUnreachableReason, err.Error())
		return nil, ctrl.Result{}, fmt.Errorf("nodezerocontrolplane %s/%s: %w", cp.Namespace, cp.Name, err)
	}
	for _, cl := range list {
		if cl != nil && cl.Kind != wire.ClusterKindAddHostsCluster && hasTag(cl.Tags, tag) {
			cp.Status.ClusterID = cl.ID
			cl.Hosts = nil
			return cl, ctrl.Result{}, nil
		}
	}
	params, err := r.clusterParams(ctx, s)
	if err != nil {
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.InvalidSpecReason, err.Error())
		return nil, ctrl.Result{RequeueAfter: r.waitInterval()}, nil
	}
	cl, err := c.RegisterCluster(ctx, params)
	if code := wire.StatusCode(err); code >= 400 && code < 500 {
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.InvalidSpecReason, err.Error())
		return nil, ctrl.Result{RequeueAfter: r.waitInterval()}, nil
	} else if err != nil {
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.ServiceUnreachableReason, err.Error())
		return nil, ctrl.Result{}, fmt.Errorf("nodezerocontrolplane %s/%s: %w", cp.Namespace, cp.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("v2 cluster registered", "cluster", cl.ID, "name", cl.Name)
	cp.Status.ClusterID = cl.ID
	return cl, ctrl.Result{}, nil
}

func hasTag(tags, tag string) bool {
	for t := range strings.SplitSeq(tags, ",") {
		if strings.TrimSpace(t) == tag {
			return true
		}
	}
	return false
}

// clusterParams is the registration of the object's cluster: docs/capi.md §1.
func (r *Reconciler) clusterParams(ctx context.Context, s *scope) (wire.ClusterCreateParams, error) {
	cp, cluster := s.cp, s.cluster
	in := cp.Spec.Cluster
	ps, err := service.SecretValue(ctx, r.Client, cp.Namespace, in.PullSecretRef.Name, PullSecretKey)
	if err != nil {
		return wire.ClusterCreateParams{}, fmt.Errorf("spec.cluster.pullSecretRef: %w", err)
	}
	replicas := int64(replicasOf(cp))
	tag := Tag(cp)
	p := wire.ClusterCreateParams{
		Name:              ClusterName(cp, cluster),
		OpenshiftVersion:  cp.Spec.DistributionVersion,
		BaseDNSDomain:     in.BaseDomain,
		PullSecret:        string(ps),
		SSHPublicKey:      in.SSHAuthorizedKey,
		ControlPlaneCount: &replicas,
		Tags:              &tag,
	}
	p.HighAvailabilityMode = wire.ClusterHighAvailabilityModeFull
	if replicas == 1 {
		p.HighAvailabilityMode = wire.ClusterHighAvailabilityModeNone
	}
	for _, ip := range in.APIVIPs {
		p.APIVIPs = append(p.APIVIPs, &wire.APIVIP{IP: wire.IP(ip)})
	}
	for _, ip := range in.IngressVIPs {
		p.IngressVIPs = append(p.IngressVIPs, &wire.IngressVIP{IP: wire.IP(ip)})
	}
	for _, n := range in.MachineNetworks {
		p.MachineNetworks = append(p.MachineNetworks, &wire.MachineNetwork{CIDR: wire.Subnet(n)})
	}
	if m := in.MastersSchedulable; m != nil {
		p.SchedulableMasters = *m
	}
	for i, cidr := range cluster.Spec.ClusterNetwork.Pods.CIDRBlocks {
		pfx, err := netip.ParsePrefix(cidr)
		if err != nil {
			return p, fmt.Errorf("cluster %s: spec.clusterNetwork.pods.cidrBlocks[%d]: %q is not a CIDR", cluster.Name, i, cidr)
		}
		hp := int64(23) // openshift-install's default per-node prefix
		if pfx.Addr().Is6() {
			hp = 64
		}
		p.ClusterNetworks = append(p.ClusterNetworks, &wire.ClusterNetwork{CIDR: wire.Subnet(cidr), HostPrefix: hp})
	}
	for i, cidr := range cluster.Spec.ClusterNetwork.Services.CIDRBlocks {
		if _, err := netip.ParsePrefix(cidr); err != nil {
			return p, fmt.Errorf("cluster %s: spec.clusterNetwork.services.cidrBlocks[%d]: %q is not a CIDR", cluster.Name, i, cidr)
		}
		p.ServiceNetworks = append(p.ServiceNetworks, &wire.ServiceNetwork{CIDR: wire.Subnet(cidr)})
	}
	return p, nil
}

func replicasOf(cp *cpv1.NodezeroControlPlane) int32 {
	if cp.Spec.Replicas == nil {
		return 3 // the CRD's default
	}
	return *cp.Spec.Replicas
}

// preInstallStatus: the cluster has not been started.
func preInstallStatus(s wire.ClusterStatus) bool {
	switch s {
	case "", wire.ClusterStatusPendingForInput, wire.ClusterStatusInsufficient, wire.ClusterStatusReady:
		return true
	}
	return false
}

// startedStatus: the install was started (it runs, ended or failed).
func startedStatus(s wire.ClusterStatus) bool { return !preInstallStatus(s) }

// installingStatus: the install runs.
func installingStatus(s wire.ClusterStatus) bool {
	switch s {
	case wire.ClusterStatusPreparingForInstallation, wire.ClusterStatusInstalling,
		wire.ClusterStatusInstallingPendingUserAction, wire.ClusterStatusFinalizing:
		return true
	}
	return false
}

// installedStatus: the cluster is installed (a day-1 cluster stays
// installed; adding-hosts is an imported one's).
func installedStatus(s wire.ClusterStatus) bool {
	return s == wire.ClusterStatusInstalled || s == wire.ClusterStatusAddingHosts
}

// expectedWorkers sums the replicas of the MachineDeployments labelled
// with the cluster (docs/capi.md §4; MachinePools are not counted).
func (r *Reconciler) expectedWorkers(ctx context.Context, s *scope) (int, error) {
	var mds clusterv1.MachineDeploymentList
	if err := r.Client.List(ctx, &mds, client.InNamespace(s.cluster.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: s.cluster.Name}); err != nil {
		return 0, fmt.Errorf("cluster %s: list MachineDeployments: %w", s.cluster.Name, err)
	}
	n := 0
	for _, md := range mds.Items {
		if !md.DeletionTimestamp.IsZero() {
			continue
		}
		if md.Spec.Replicas != nil {
			n += int(*md.Spec.Replicas)
		}
	}
	return n, nil
}

// boundHostIDs are the hosts bound to the cluster's Machines: the
// status.hostID of every NodezeroConfig labelled with the cluster whose
// Machine is not going.
func (r *Reconciler) boundHostIDs(ctx context.Context, s *scope) (map[string]string, error) {
	var cfgs bootstrapv1.NodezeroConfigList
	if err := r.Client.List(ctx, &cfgs, client.InNamespace(s.cluster.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: s.cluster.Name}); err != nil {
		return nil, fmt.Errorf("cluster %s: list NodezeroConfigs: %w", s.cluster.Name, err)
	}
	ids := map[string]string{}
	for _, c := range cfgs.Items {
		if c.DeletionTimestamp.IsZero() && c.Status.HostID != "" {
			ids[c.Status.HostID] = c.Name
		}
	}
	return ids, nil
}

// startInstall posts the install once every expected Machine has a bound
// host and StartDecision, given the bound hosts, says yes (docs/capi.md §4).
// The returned cluster is the freshest the service gave.
func (r *Reconciler) startInstall(ctx context.Context, s *scope, v2 *wire.Cluster, machines []clusterv1.Machine) (*wire.Cluster, error) {
	cp := s.cp
	if !preInstallStatus(v2.Status) {
		return v2, nil
	}
	masters := int(replicasOf(cp))
	workers, err := r.expectedWorkers(ctx, s)
	if err != nil {
		return v2, err
	}
	bound, err := r.boundHostIDs(ctx, s)
	if err != nil {
		return v2, err
	}
	want := masters + workers
	if len(machines) != masters || len(bound) < want {
		msg := fmt.Sprintf("%d of %d expected hosts bound to their Machines (%d control plane, %d workers); the cluster is %s",
			min(len(bound), want), want, masters, workers, orPending(v2.Status))
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.WaitingForHostsReason, msg)
		return v2, nil
	}
	all, err := s.svc.User.ListClusterHostsQuery(ctx, v2.ID, wire.HostsQuery{})
	if err != nil {
		return v2, fmt.Errorf("nodezerocontrolplane %s/%s: %w", cp.Namespace, cp.Name, err)
	}
	var hosts []*wire.Host
	for _, h := range all {
		if h != nil {
			if _, ok := bound[h.ID]; ok {
				hosts = append(hosts, h)
			}
		}
	}
	start, why := register.StartDecision(v2, hosts, masters, workers)
	if !start {
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.WaitingForHostsReason, why)
		return v2, nil
	}
	cl, err := s.svc.User.InstallCluster(ctx, v2.ID)
	if wire.IsStatus(err, 409) {
		// The cluster left ready in between: look again next time.
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.WaitingForHostsReason, err.Error())
		return v2, nil
	}
	if err != nil {
		return v2, fmt.Errorf("nodezerocontrolplane %s/%s: %w", cp.Namespace, cp.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("install started", "cluster", v2.ID, "hosts", len(hosts))
	cl.Hosts = nil
	return cl, nil
}

func orPending(s wire.ClusterStatus) string {
	if s == "" {
		return "pending"
	}
	return string(s)
}

// reportInstall writes status.installState, status.version and the
// Installed condition from the v2 cluster.
func (r *Reconciler) reportInstall(cp *cpv1.NodezeroControlPlane, v2 *wire.Cluster) {
	cp.Status.InstallState = string(v2.Status)
	msg := string(v2.Status)
	if v2.StatusInfo != "" {
		msg += ": " + v2.StatusInfo
	}
	switch {
	case installedStatus(v2.Status):
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionTrue, cpv1.InstalledReason, msg)
		cp.Status.Version = cp.Spec.Version
	case v2.Status == wire.ClusterStatusError || v2.Status == wire.ClusterStatusCancelled:
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.InstallFailedReason, msg)
	case installingStatus(v2.Status):
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.InstallingReason, msg)
	}
	// Before the install the condition is startInstall's (WaitingForHosts).
}

// reportAvailable: Available (mirrored to the Cluster's
// ControlPlaneAvailable) once the cluster is finalizing, installed or
// adding hosts and its API answers.
func (r *Reconciler) reportAvailable(cp *cpv1.NodezeroControlPlane, v2 *wire.Cluster, apiAnswers bool) {
	late := v2.Status == wire.ClusterStatusFinalizing || installedStatus(v2.Status)
	switch {
	case late && apiAnswers:
		r.setCondition(cp, cpv1.AvailableCondition, metav1.ConditionTrue, cpv1.AvailableReason, "the cluster's API answers")
	case late:
		r.setCondition(cp, cpv1.AvailableCondition, metav1.ConditionFalse, cpv1.NotAvailableReason,
			fmt.Sprintf("the cluster is %s but its API does not answer through the kubeconfig secret yet", v2.Status))
	default:
		r.setCondition(cp, cpv1.AvailableCondition, metav1.ConditionFalse, cpv1.InstallingReason, "the cluster is "+orPending(v2.Status))
	}
}

// deleteV2Clusters removes the day-2 and the day-1 cluster, cancelling an
// install that runs (the service refuses to delete it otherwise). It
// returns once both are gone from the service.
func (r *Reconciler) deleteV2Clusters(ctx context.Context, s *scope) error {
	c := s.svc.User
	for _, id := range slices.DeleteFunc([]string{s.cp.Status.Day2ClusterID, s.cp.Status.ClusterID}, func(id string) bool { return id == "" }) {
		cl, err := c.GetClusterExcludingHosts(ctx, id)
		if wire.IsStatus(err, 404) {
			continue
		}
		if err != nil {
			return err
		}
		if installingStatus(cl.Status) {
			if _, err := c.CancelInstallation(ctx, id); err != nil && !wire.IsStatus(err, 409) {
				return fmt.Errorf("cluster %s: %w", id, err)
			}
		}
		if err := c.DeregisterCluster(ctx, id); err != nil && !wire.IsStatus(err, 404) {
			return fmt.Errorf("cluster %s: %w", id, err)
		}
		ctrl.LoggerFrom(ctx).Info("v2 cluster deregistered", "cluster", id)
	}
	// A cluster whose id the status lost, found by its tag.
	list, err := c.ListClusters(ctx)
	if err != nil {
		return err
	}
	tag := Tag(s.cp)
	for _, cl := range list {
		if cl == nil || !hasTag(cl.Tags, tag) {
			continue
		}
		if installingStatus(cl.Status) {
			if _, err := c.CancelInstallation(ctx, cl.ID); err != nil && !wire.IsStatus(err, 409) {
				return fmt.Errorf("cluster %s: %w", cl.ID, err)
			}
		}
		if err := c.DeregisterCluster(ctx, cl.ID); err != nil && !wire.IsStatus(err, 404) {
			return fmt.Errorf("cluster %s: %w", cl.ID, err)
		}
	}
	return nil
}
