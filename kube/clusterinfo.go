package kube

import "github.com/nodezero/nodezero/onhost"

// ClusterInfo is what adding nodes to an installed cluster needs to know
// of it, read from its API as openshift/installer's node-joiner reads it
// (docs/reference/abi-on-host.md §1.1): `nodezero create node-config-image`
// writes it into the node config image.
type ClusterInfo struct {
	// ClusterID is ClusterVersion version's spec.clusterID; Version and
	// ReleaseImage its status.history[0].
	ClusterID, Version, ReleaseImage string
	// APIDNSName is the host of Infrastructure cluster's
	// status.apiServerURL (api.<cluster>.<domain>); ClusterName and
	// BaseDomain are taken from it.
	APIDNSName, ClusterName, BaseDomain string
	// PlatformType is Infrastructure cluster's spec.platformSpec.type
	// (None, BareMetal, ...); UserManagedNetworking is true for None.
	PlatformType          string
	UserManagedNetworking bool
	// PullSecret is openshift-config/pull-secret's .dockerconfigjson.
	PullSecret []byte
	// Architecture is a control-plane Node's status.nodeInfo.architecture
	// (amd64, arm64...), unless the nodes config names one.
	Architecture string
	// WorkerIgnition is the worker pool's machine config server and its
	// CA, from openshift-machine-api/worker-user-data-managed's pointer
	// Ignition; nil when the secret is absent or names no CA.
	WorkerIgnition *onhost.WorkerIgnitionEndpoint
}
