package wire

type InventoryTruncation struct {
	Type InventoryTruncationType `json:"type"`
	// Reasons for the truncation
	Reasons []string `json:"reasons,omitempty"`
}

type Inventory struct {
	Hostname     string               `json:"hostname,omitempty"`
	BMCAddress   string               `json:"bmc_address,omitempty"`
	Interfaces   []*Interface         `json:"interfaces,omitempty"`
	Disks        []*Disk              `json:"disks,omitempty"`
	Boot         *Boot                `json:"boot,omitempty"`
	SystemVendor *SystemVendor        `json:"system_vendor,omitempty"`
	BMCV6address string               `json:"bmc_v6address,omitempty"`
	Memory       *Memory              `json:"memory,omitempty"`
	CPU          *CPU                 `json:"cpu,omitempty"`
	GPUs         []*GPU               `json:"gpus,omitempty"`
	Routes       []*Route             `json:"routes,omitempty"`
	TPMVersion   InventoryTPMVersion  `json:"tpm_version,omitempty"`
	Truncation   *InventoryTruncation `json:"truncation,omitempty"`
}

type Interface struct {
	IPv6Addresses []string `json:"ipv6_addresses,omitempty"`
	Vendor        string   `json:"vendor,omitempty"`
	Name          string   `json:"name,omitempty"`
	HasCarrier    bool     `json:"has_carrier,omitempty"`
	Product       string   `json:"product,omitempty"`
	MTU           int64    `json:"mtu,omitempty"`
	IPv4Addresses []string `json:"ipv4_addresses,omitempty"`
	Biosdevname   string   `json:"biosdevname,omitempty"`
	ClientID      string   `json:"client_id,omitempty"`
	MACAddress    string   `json:"mac_address,omitempty"`
	Flags         []string `json:"flags,omitempty"`
	SpeedMbps     int64    `json:"speed_mbps,omitempty"`
	Type          string   `json:"type,omitempty"`
}

type DiskInstallationEligibility struct {
	// Whether the disk is eligible for installation or not.
	Eligible bool `json:"eligible,omitempty"`
	// Reasons for why this disk is not eligible for installation.
	NotEligibleReasons []string `json:"not_eligible_reasons,omitempty"`
}

type Disk struct {
	// Determine the disk's unique identifier which is the by-id field if it exists and fallback to the by-path field otherwise
	ID        string    `json:"id,omitempty"`
	DriveType DriveType `json:"drive_type,omitempty"`
	HasUUID   bool      `json:"has_uuid,omitempty"`
	Vendor    string    `json:"vendor,omitempty"`
	Name      string    `json:"name,omitempty"`
	Path      string    `json:"path,omitempty"`
	HCTL      string    `json:"hctl,omitempty"`
	// by-path is the shortest physical path to the device
	ByPath string `json:"by_path,omitempty"`
	// by-id is the World Wide Number of the device which guaranteed to be unique for every storage device
	ByID           string `json:"by_id,omitempty"`
	Model          string `json:"model,omitempty"`
	WWN            string `json:"wwn,omitempty"`
	Serial         string `json:"serial,omitempty"`
	SizeBytes      int64  `json:"size_bytes,omitempty"`
	Bootable       bool   `json:"bootable,omitempty"`
	Removable      bool   `json:"removable,omitempty"`
	PartitionTypes string `json:"partitionTypes,omitempty"`
	// Whether the disk appears to be an installation media or not
	IsInstallationMedia     bool                         `json:"is_installation_media,omitempty"`
	InstallationEligibility *DiskInstallationEligibility `json:"installation_eligibility,omitempty"`
	Smart                   string                       `json:"smart,omitempty"`
	IOPerf                  *IOPerf                      `json:"io_perf,omitempty"`
	// A comma-separated list of disk names that this disk belongs to
	Holders string `json:"holders,omitempty"`
	ISCSI   *ISCSI `json:"iscsi,omitempty"`
}

type IOPerf struct {
	// 99th percentile of fsync duration in milliseconds
	SyncDuration int64 `json:"sync_duration,omitempty"`
}

type ISCSI struct {
	// Host IP address used to reach iSCSI target
	HostIPAddress string `json:"host_ip_address,omitempty"`
}

type Boot struct {
	CurrentBootMode string          `json:"current_boot_mode,omitempty"`
	PXEInterface    string          `json:"pxe_interface,omitempty"`
	CommandLine     string          `json:"command_line,omitempty"`
	SecureBootState SecureBootState `json:"secure_boot_state,omitempty"`
	DeviceType      BootDeviceType  `json:"device_type,omitempty"`
}

type SystemVendor struct {
	SerialNumber string `json:"serial_number,omitempty"`
	ProductName  string `json:"product_name,omitempty"`
	Manufacturer string `json:"manufacturer,omitempty"`
	// Whether the machine appears to be a virtual machine or not
	Virtual bool `json:"virtual,omitempty"`
}

type Memory struct {
	PhysicalBytes int64 `json:"physical_bytes,omitempty"`
	UsableBytes   int64 `json:"usable_bytes,omitempty"`
	// The method by which the physical memory was set
	PhysicalBytesMethod MemoryMethod `json:"physical_bytes_method,omitempty"`
}

type CPU struct {
	Count        int64    `json:"count,omitempty"`
	Frequency    float64  `json:"frequency,omitempty"`
	Flags        []string `json:"flags,omitempty"`
	ModelName    string   `json:"model_name,omitempty"`
	Architecture string   `json:"architecture,omitempty"`
}

type GPU struct {
	// The name of the device vendor (for example "Intel Corporation")
	Vendor string `json:"vendor,omitempty"`
	// ID of the vendor (for example "8086")
	VendorID string `json:"vendor_id,omitempty"`
	// ID of the device (for example "3ea0")
	DeviceID string `json:"device_id,omitempty"`
	// Product name of the device (for example "UHD Graphics 620 (Whiskey Lake)")
	Name string `json:"name,omitempty"`
	// Device address (for example "0000:00:02.0")
	Address string `json:"address,omitempty"`
}

type Route struct {
	// Interface to which packets for this route will be sent
	Interface string `json:"interface,omitempty"`
	// Gateway address where the packets are sent
	Gateway string `json:"gateway,omitempty"`
	// The destination network or destination host
	Destination string `json:"destination,omitempty"`
	// Defines whether this is an IPv4 (4) or IPv6 route (6)
	Family int32 `json:"family,omitempty"`
	// Route priority metric
	Metric int32 `json:"metric,omitempty"`
}

type InventoryTPMVersion string

const (
	InventoryTPMVersionNone InventoryTPMVersion = "none"
	InventoryTPMVersion12   InventoryTPMVersion = "1.2"
	InventoryTPMVersion20   InventoryTPMVersion = "2.0"
)

type InventoryTruncationType string

const (
	InventoryTruncationTypePartial InventoryTruncationType = "partial"
	InventoryTruncationTypeFull    InventoryTruncationType = "full"
)

type DriveType string

const (
	DriveTypeUnknown   DriveType = "Unknown"
	DriveTypeHDD       DriveType = "HDD"
	DriveTypeFDD       DriveType = "FDD"
	DriveTypeODD       DriveType = "ODD"
	DriveTypeSSD       DriveType = "SSD"
	DriveTypeVirtual   DriveType = "virtual"
	DriveTypeMultipath DriveType = "Multipath"
	DriveTypeISCSI     DriveType = "iSCSI"
	DriveTypeFC        DriveType = "FC"
	DriveTypeLVM       DriveType = "LVM"
	DriveTypeRAID      DriveType = "RAID"
	DriveTypeECKD      DriveType = "ECKD"
	DriveTypeECKDESE   DriveType = "ECKD (ESE)"
	DriveTypeFBA       DriveType = "FBA"
)

type BootDeviceType string

const (
	BootDeviceTypePersistent BootDeviceType = "persistent"
	BootDeviceTypeEphemeral  BootDeviceType = "ephemeral"
)

type SecureBootState string

const (
	SecureBootStateUnknown      SecureBootState = "Unknown"
	SecureBootStateNotSupported SecureBootState = "NotSupported"
	SecureBootStateEnabled      SecureBootState = "Enabled"
	SecureBootStateDisabled     SecureBootState = "Disabled"
)

type MemoryMethod string

const (
	MemoryMethodDmidecode MemoryMethod = "dmidecode"
	MemoryMethodGhw       MemoryMethod = "ghw"
	MemoryMethodMeminfo   MemoryMethod = "meminfo"
)
