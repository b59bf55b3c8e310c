package wire

// Validation IDs of nodezero's own, beyond assisted-service's enums. They
// report on the config image's host configs (ABI's apply-host-config
// failures, which assisted-service has no validation for) and appear only
// on a service started with host configs, so an assisted client sees the
// same validations_info as from assisted-service otherwise.
const (
	// HostValidationIDInstallationDiskMatchesHints fails when no eligible
	// disk of a configured host matches its root device hints.
	HostValidationIDInstallationDiskMatchesHints HostValidationID = "installation-disk-matches-root-device-hints"
	// ClusterValidationIDConfiguredHostsRegistered fails when a host config
	// matches no registered host once the grace time after registration
	// has passed.
	ClusterValidationIDConfiguredHostsRegistered ClusterValidationID = "configured-hosts-registered"
)
