package onhost

// Paths on a host, absolute; callers join them to the host's root.
const (
	// RendezvousEnvPath is node zero's address, URLs and tokens; the config
	// image writes it last, so its presence means the image is complete.
	RendezvousEnvPath      = "/etc/assisted/rendezvous-host.env"
	AssistedServiceEnvPath = "/usr/local/share/assisted-service/assisted-service.env"
	StartClusterEnvPath    = "/usr/local/share/start-cluster/start-cluster.env"
	// Node0Path is where node zero records that it is node zero, with the
	// bootstrap host's MAC.
	Node0Path = "/etc/assisted/node0"
	// BootDiskPath records the disk a host boots after its install (the
	// sandbox's stand-in for the firmware's boot order).
	BootDiskPath = "/var/lib/nodezero/boot-disk.json"
)
