package onhost

import (
	"encoding/json"
	"fmt"
	"time"
)

// BootDisk is boot-disk.json: the disk a host boots after its install and
// who the host is on it.
type BootDisk struct {
	Disk       string `json:"disk"`        // the stand-in file written
	BootDevice string `json:"boot_device"` // the device the service named
	ClusterID  string `json:"cluster_id"`
	InfraEnvID string `json:"infra_env_id"`
	HostID     string `json:"host_id"`
	// Role is as the install step gave it: bootstrap, master or worker.
	Role string `json:"role"`
	// ControlPlaneCount is 1 on a single node, whose stages after the
	// reboot are Joined and Done only.
	ControlPlaneCount int64     `json:"control_plane_count,omitempty"`
	RebootedAt        time.Time `json:"rebooted_at"`
	// Live marks a real machine's record: Disk is the block device
	// written, and the installed OS booted from it applies its Ignition
	// itself, so what it applied is read on the running system rather
	// than from the disk.
	Live bool `json:"live,omitempty"`
}

// Marshal is d as the file holds it.
func (d BootDisk) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseBootDisk reads boot-disk.json; name is for errors.
func ParseBootDisk(name string, data []byte) (*BootDisk, error) {
	var d BootDisk
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &d, nil
}
