// The enumerations of the cluster's fields, spelled as the swagger spells them.

package wire

type ClusterKind string

const (
	ClusterKindCluster             ClusterKind = "Cluster"
	ClusterKindAddHostsCluster     ClusterKind = "AddHostsCluster"
	ClusterKindDisconnectedCluster ClusterKind = "DisconnectedCluster"
)

type ClusterHighAvailabilityMode string

const (
	ClusterHighAvailabilityModeFull ClusterHighAvailabilityMode = "Full"
	ClusterHighAvailabilityModeNone ClusterHighAvailabilityMode = "None"
)

type ClusterStatus string

const (
	ClusterStatusInsufficient                ClusterStatus = "insufficient"
	ClusterStatusReady                       ClusterStatus = "ready"
	ClusterStatusError                       ClusterStatus = "error"
	ClusterStatusPreparingForInstallation    ClusterStatus = "preparing-for-installation"
	ClusterStatusPendingForInput             ClusterStatus = "pending-for-input"
	ClusterStatusInstalling                  ClusterStatus = "installing"
	ClusterStatusFinalizing                  ClusterStatus = "finalizing"
	ClusterStatusInstalled                   ClusterStatus = "installed"
	ClusterStatusAddingHosts                 ClusterStatus = "adding-hosts"
	ClusterStatusCancelled                   ClusterStatus = "cancelled"
	ClusterStatusInstallingPendingUserAction ClusterStatus = "installing-pending-user-action"
	ClusterStatusUnmonitored                 ClusterStatus = "unmonitored"
)

type ClusterHyperthreading string

const (
	ClusterHyperthreadingNone                   ClusterHyperthreading = "none"
	ClusterHyperthreadingMasters                ClusterHyperthreading = "masters"
	ClusterHyperthreadingArbiters               ClusterHyperthreading = "arbiters"
	ClusterHyperthreadingWorkers                ClusterHyperthreading = "workers"
	ClusterHyperthreadingMastersArbiters        ClusterHyperthreading = "masters,arbiters"
	ClusterHyperthreadingMastersWorkers         ClusterHyperthreading = "masters,workers"
	ClusterHyperthreadingArbitersWorkers        ClusterHyperthreading = "arbiters,workers"
	ClusterHyperthreadingMastersArbitersWorkers ClusterHyperthreading = "masters,arbiters,workers"
	ClusterHyperthreadingAll                    ClusterHyperthreading = "all"
)

type ClusterNetworkType string

const (
	ClusterNetworkTypeOpenShiftSDN  ClusterNetworkType = "OpenShiftSDN"
	ClusterNetworkTypeOVNKubernetes ClusterNetworkType = "OVNKubernetes"
	ClusterNetworkTypeCiscoACI      ClusterNetworkType = "CiscoACI"
	ClusterNetworkTypeCilium        ClusterNetworkType = "Cilium"
	ClusterNetworkTypeCalico        ClusterNetworkType = "Calico"
	ClusterNetworkTypeNone          ClusterNetworkType = "None"
)

type ClusterCPUArchitecture string

const (
	ClusterCPUArchitectureX8664   ClusterCPUArchitecture = "x86_64"
	ClusterCPUArchitectureAarch64 ClusterCPUArchitecture = "aarch64"
	ClusterCPUArchitectureArm64   ClusterCPUArchitecture = "arm64"
	ClusterCPUArchitecturePpc64le ClusterCPUArchitecture = "ppc64le"
	ClusterCPUArchitectureS390x   ClusterCPUArchitecture = "s390x"
	ClusterCPUArchitectureMulti   ClusterCPUArchitecture = "multi"
)

type ImageType string

const (
	ImageTypeFullISO         ImageType = "full-iso"
	ImageTypeMinimalISO      ImageType = "minimal-iso"
	ImageTypeDisconnectedISO ImageType = "disconnected-iso"
)

type PlatformType string

const (
	PlatformTypeBaremetal PlatformType = "baremetal"
	PlatformTypeNutanix   PlatformType = "nutanix"
	PlatformTypeVsphere   PlatformType = "vsphere"
	PlatformTypeNone      PlatformType = "none"
	PlatformTypeExternal  PlatformType = "external"
)

type PlatformExternalCloudControllerManager string

const (
	PlatformExternalCloudControllerManagerEmpty    PlatformExternalCloudControllerManager = ""
	PlatformExternalCloudControllerManagerExternal PlatformExternalCloudControllerManager = "External"
)

// vip verification result.
type VIPVerification string

const (
	VIPVerificationUnverified VIPVerification = "unverified"
	VIPVerificationFailed     VIPVerification = "failed"
	VIPVerificationSucceeded  VIPVerification = "succeeded"
)

// Cluster finalizing stage managed by controller
type FinalizingStage string

const (
	FinalizingStageWaitingForClusterOperators              FinalizingStage = "Waiting for cluster operators"
	FinalizingStageAddingRouterCA                          FinalizingStage = "Adding router ca"
	FinalizingStageApplyingOLMManifests                    FinalizingStage = "Applying olm manifests"
	FinalizingStageWaitingForOLMOperatorsCsvInitialization FinalizingStage = "Waiting for olm operators csv initialization"
	FinalizingStageWaitingForOLMOperatorsCsv               FinalizingStage = "Waiting for olm operators csv"
	FinalizingStageWaitingForOLMOperatorSetupJobs          FinalizingStage = "Waiting for OLM operator setup jobs"
	FinalizingStageDone                                    FinalizingStage = "Done"
)

type DiskEncryptionEnableOn string

const (
	DiskEncryptionEnableOnNone                   DiskEncryptionEnableOn = "none"
	DiskEncryptionEnableOnMasters                DiskEncryptionEnableOn = "masters"
	DiskEncryptionEnableOnArbiters               DiskEncryptionEnableOn = "arbiters"
	DiskEncryptionEnableOnWorkers                DiskEncryptionEnableOn = "workers"
	DiskEncryptionEnableOnMastersArbiters        DiskEncryptionEnableOn = "masters,arbiters"
	DiskEncryptionEnableOnMastersWorkers         DiskEncryptionEnableOn = "masters,workers"
	DiskEncryptionEnableOnArbitersWorkers        DiskEncryptionEnableOn = "arbiters,workers"
	DiskEncryptionEnableOnMastersArbitersWorkers DiskEncryptionEnableOn = "masters,arbiters,workers"
	DiskEncryptionEnableOnAll                    DiskEncryptionEnableOn = "all"
)

type DiskEncryptionMode string

const (
	DiskEncryptionModeTpmv2 DiskEncryptionMode = "tpmv2"
	DiskEncryptionModeTang  DiskEncryptionMode = "tang"
)

// Kind of operator. Different types are monitored by the service differently.
type OperatorType string

const (
	OperatorTypeBuiltin OperatorType = "builtin"
	OperatorTypeOLM     OperatorType = "olm"
)

// Represents the operator state.
type OperatorStatus string

const (
	OperatorStatusFailed      OperatorStatus = "failed"
	OperatorStatusProgressing OperatorStatus = "progressing"
	OperatorStatusAvailable   OperatorStatus = "available"
)

type LastInstallationPreparationStatus string

const (
	LastInstallationPreparationStatusNotStarted LastInstallationPreparationStatus = "not_started"
	LastInstallationPreparationStatusFailed     LastInstallationPreparationStatus = "failed"
	LastInstallationPreparationStatusSuccess    LastInstallationPreparationStatus = "success"
)

type LoadBalancerType string

const (
	LoadBalancerTypeClusterManaged LoadBalancerType = "cluster-managed"
	LoadBalancerTypeUserManaged    LoadBalancerType = "user-managed"
)

type ClusterValidationID string

const (
	ClusterValidationIDMachineCIDRDefined                          ClusterValidationID = "machine-cidr-defined"
	ClusterValidationIDClusterCIDRDefined                          ClusterValidationID = "cluster-cidr-defined"
	ClusterValidationIDServiceCIDRDefined                          ClusterValidationID = "service-cidr-defined"
	ClusterValidationIDNoCidrsOverlapping                          ClusterValidationID = "no-cidrs-overlapping"
	ClusterValidationIDNetworksSameAddressFamilies                 ClusterValidationID = "networks-same-address-families"
	ClusterValidationIDNetworkPrefixValid                          ClusterValidationID = "network-prefix-valid"
	ClusterValidationIDMachineCIDREqualsToCalculatedCIDR           ClusterValidationID = "machine-cidr-equals-to-calculated-cidr"
	ClusterValidationIDAPIVIPsDefined                              ClusterValidationID = "api-vips-defined"
	ClusterValidationIDAPIVIPsValid                                ClusterValidationID = "api-vips-valid"
	ClusterValidationIDIngressVIPsDefined                          ClusterValidationID = "ingress-vips-defined"
	ClusterValidationIDIngressVIPsValid                            ClusterValidationID = "ingress-vips-valid"
	ClusterValidationIDAllHostsAreReadyToInstall                   ClusterValidationID = "all-hosts-are-ready-to-install"
	ClusterValidationIDSufficientMastersCount                      ClusterValidationID = "sufficient-masters-count"
	ClusterValidationIDDNSDomainDefined                            ClusterValidationID = "dns-domain-defined"
	ClusterValidationIDPullSecretSet                               ClusterValidationID = "pull-secret-set"
	ClusterValidationIDNTPServerConfigured                         ClusterValidationID = "ntp-server-configured"
	ClusterValidationIDLsoRequirementsSatisfied                    ClusterValidationID = "lso-requirements-satisfied"
	ClusterValidationIDOcsRequirementsSatisfied                    ClusterValidationID = "ocs-requirements-satisfied"
	ClusterValidationIDOdfRequirementsSatisfied                    ClusterValidationID = "odf-requirements-satisfied"
	ClusterValidationIDCnvRequirementsSatisfied                    ClusterValidationID = "cnv-requirements-satisfied"
	ClusterValidationIDLvmRequirementsSatisfied                    ClusterValidationID = "lvm-requirements-satisfied"
	ClusterValidationIDMceRequirementsSatisfied                    ClusterValidationID = "mce-requirements-satisfied"
	ClusterValidationIDMtvRequirementsSatisfied                    ClusterValidationID = "mtv-requirements-satisfied"
	ClusterValidationIDOscRequirementsSatisfied                    ClusterValidationID = "osc-requirements-satisfied"
	ClusterValidationIDNetworkTypeValid                            ClusterValidationID = "network-type-valid"
	ClusterValidationIDCustomManifestsRequirementsSatisfied        ClusterValidationID = "custom-manifests-requirements-satisfied"
	ClusterValidationIDPlatformRequirementsSatisfied               ClusterValidationID = "platform-requirements-satisfied"
	ClusterValidationIDNodeFeatureDiscoveryRequirementsSatisfied   ClusterValidationID = "node-feature-discovery-requirements-satisfied"
	ClusterValidationIDNvidiaGPURequirementsSatisfied              ClusterValidationID = "nvidia-gpu-requirements-satisfied"
	ClusterValidationIDPipelinesRequirementsSatisfied              ClusterValidationID = "pipelines-requirements-satisfied"
	ClusterValidationIDServicemeshRequirementsSatisfied            ClusterValidationID = "servicemesh-requirements-satisfied"
	ClusterValidationIDServerlessRequirementsSatisfied             ClusterValidationID = "serverless-requirements-satisfied"
	ClusterValidationIDOpenshiftAiRequirementsSatisfied            ClusterValidationID = "openshift-ai-requirements-satisfied"
	ClusterValidationIDOpenshiftAiGPURequirementsSatisfied         ClusterValidationID = "openshift-ai-gpu-requirements-satisfied"
	ClusterValidationIDAuthorinoRequirementsSatisfied              ClusterValidationID = "authorino-requirements-satisfied"
	ClusterValidationIDNmstateRequirementsSatisfied                ClusterValidationID = "nmstate-requirements-satisfied"
	ClusterValidationIDAmdGPURequirementsSatisfied                 ClusterValidationID = "amd-gpu-requirements-satisfied"
	ClusterValidationIDKmmRequirementsSatisfied                    ClusterValidationID = "kmm-requirements-satisfied"
	ClusterValidationIDNodeHealthcheckRequirementsSatisfied        ClusterValidationID = "node-healthcheck-requirements-satisfied"
	ClusterValidationIDSelfNodeRemediationRequirementsSatisfied    ClusterValidationID = "self-node-remediation-requirements-satisfied"
	ClusterValidationIDFenceAgentsRemediationRequirementsSatisfied ClusterValidationID = "fence-agents-remediation-requirements-satisfied"
	ClusterValidationIDNodeMaintenanceRequirementsSatisfied        ClusterValidationID = "node-maintenance-requirements-satisfied"
	ClusterValidationIDKubeDeschedulerRequirementsSatisfied        ClusterValidationID = "kube-descheduler-requirements-satisfied"
	ClusterValidationIDClusterObservabilityRequirementsSatisfied   ClusterValidationID = "cluster-observability-requirements-satisfied"
	ClusterValidationIDNumaResourcesRequirementsSatisfied          ClusterValidationID = "numa-resources-requirements-satisfied"
	ClusterValidationIDOadpRequirementsSatisfied                   ClusterValidationID = "oadp-requirements-satisfied"
	ClusterValidationIDMetallbRequirementsSatisfied                ClusterValidationID = "metallb-requirements-satisfied"
	ClusterValidationIDLokiRequirementsSatisfied                   ClusterValidationID = "loki-requirements-satisfied"
	ClusterValidationIDOpenshiftLoggingRequirementsSatisfied       ClusterValidationID = "openshift-logging-requirements-satisfied"
)
