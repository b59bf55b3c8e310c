package bootstrap

import (
	"github.com/nodezero/nodezero/wire"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
)

// gate is where a Machine's infra-env is bound, decided from the day-1 v2
// cluster's status (docs/capi.md §5): a control-plane Machine always joins the
// day-1 cluster; a worker does too before the install starts; while the
// install runs (or failed, or was cancelled) it gets nothing; once the
// cluster is installed it joins the day-2 cluster, when the control plane
// has imported one. clusterID "" means wait, for reason.
func gate(controlPlane bool, day1Status wire.ClusterStatus, day1ID, day2ID string) (clusterID, reason string) {
	if controlPlane {
		return day1ID, ""
	}
	switch day1Status {
	case "", wire.ClusterStatusPendingForInput, wire.ClusterStatusInsufficient, wire.ClusterStatusReady:
		return day1ID, ""
	case wire.ClusterStatusInstalled, wire.ClusterStatusAddingHosts, wire.ClusterStatusUnmonitored:
		if day2ID == "" {
			return "", bootstrapv1.WaitingForControlPlaneReason
		}
		return day2ID, ""
	default: // preparing-for-installation, installing, installing-pending-user-action, finalizing, error, cancelled
		return "", bootstrapv1.WaitingForInstallCompleteReason
	}
}
