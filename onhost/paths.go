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
	// DataDir is nodezero's own data on a host: node zero's store and
	// auth/, the install journal, the records below.
	DataDir = "/var/lib/nodezero"
	// BootDiskPath records the disk a host boots after its install (the
	// sandbox's stand-in for the firmware's boot order).
	BootDiskPath = DataDir + "/boot-disk.json"
	// NetworkAppliedPath records the digest of the network keyfiles last
	// applied.
	NetworkAppliedPath = DataDir + "/network-applied"
	// PayloadDir is where a factory image carries its payload:
	// PayloadFile (payload.json, hostagent/diskwrite's format) and the OS
	// image it names.
	PayloadDir  = "/usr/share/nodezero/payload"
	PayloadFile = "payload.json"
)
