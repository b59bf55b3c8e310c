package validation

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// Host validations fed by the preparation checks and ntp-synchronizer
// (assisted internal/host/validator.go), and the outcomes the host
// machine reads of the preparation checks.

func hostNTPSynced(c *hostContext) (wire.ValidationStatus, string) {
	const failed = "Host couldn't synchronize with any NTP server"
	ntp := c.checks.NTPSources
	if !ntp.Set {
		// assisted hides it for an unbound host without NTP sources to use.
		if c.cluster == nil {
			return statusHidden, ""
		}
		return wire.ValidationFailure, failed
	}
	if ntp.Unreadable {
		return wire.ValidationError, "Parse error for NTP sources"
	}
	for _, s := range ntp.Value {
		if s != nil && s.SourceState == wire.SourceStateSynced {
			return wire.ValidationSuccess, "Host NTP is synced"
		}
	}
	return wire.ValidationFailure, failed
}

// imageDownloadRateThreshold is assisted's ImageStatusDownloadRateThreshold
// in MB/s.
const imageDownloadRateThreshold = 0.001

func hostContainerImagesAvailable(c *hostContext) (wire.ValidationStatus, string) {
	failed, err := failedImages(c.checks.Images)
	if err != nil {
		return wire.ValidationError, "Validation error"
	}
	if len(failed) > 0 {
		return wire.ValidationFailure, fmt.Sprintf("Failed to fetch container images needed for installation from %s. This may be due to a network hiccup. Retry to install again. If this problem persists, check your network settings to make sure you’re not blocked.", strings.Join(failed, ","))
	}
	return wire.ValidationSuccess, "All required container images were either pulled successfully or no attempt was made to pull them"
}

// failedImages are the names, sorted, of the images pulled that failed or
// came down slower than assisted's threshold.
func failedImages(images Reported[map[string]*wire.ContainerImageAvailability]) ([]string, error) {
	if images.Unreadable {
		return nil, errUnreadable
	}
	var failed []string
	for name, a := range images.Value {
		if a == nil {
			continue
		}
		if a.Name != "" {
			name = a.Name
		}
		if imageFailed(a) {
			failed = append(failed, name)
		}
	}
	sort.Strings(failed)
	return failed, nil
}

func imageFailed(a *wire.ContainerImageAvailability) bool {
	return a.Result == wire.ContainerImageAvailabilityResultFailure || (a.SizeBytes > 0 && a.DownloadRate < imageDownloadRateThreshold)
}

// Outcome is what a preparation check has shown for a host so far.
type Outcome int

const (
	NotMeasured Outcome = iota
	Passed
	Failed
)

// Preparation is what the two preparation checks (assisted's
// installationDiskSpeedCheckSuccessful and
// successfulContainerImageAvailability conditions) have shown: the state
// machine reads it, the validations sufficient-installation-disk-speed and
// container-images-available report the same data.
type Preparation struct {
	DiskSpeed Outcome
	Images    Outcome
}

// RequiredImages are the images a host must pull before installing: the
// release image (nodezero writes the OS itself, so there is no installer or
// agent image to pull). Empty while the release image is unknown.
func (v *Validator) RequiredImages(c *wire.Cluster) []string {
	if img := v.ReleaseImageOf(c); img != "" {
		return []string{img}
	}
	return nil
}

// imagesOutcome: failed when any image failed, passed when every required
// image was pulled, not measured otherwise.
func (c *hostContext) imagesOutcome() Outcome {
	if c.checks.Images.Unreadable {
		return Failed // unreadable results cannot let the install on
	}
	statuses := c.checks.Images.Value
	for _, a := range statuses {
		if a != nil && imageFailed(a) {
			return Failed
		}
	}
	for _, img := range c.v.RequiredImages(c.cluster) {
		if a := statuses[img]; a == nil || a.Result != wire.ContainerImageAvailabilityResultSuccess {
			return NotMeasured
		}
	}
	return Passed
}

// DiskSpeed is one disk's speed test result in host.disks_info (assisted's
// disk_info.disk_speed).
type DiskSpeed struct {
	Tested   bool  `json:"tested"`
	ExitCode int64 `json:"exit_code"`
	SpeedMs  int64 `json:"speed_ms,omitempty"`
	// Reason is what the agent said when the measurement failed (the
	// step's stderr): nodezero's addition, so that the validation says
	// why and not only the exit code.
	Reason string `json:"reason,omitempty"`
}

// DiskInfo is one entry of host.disks_info, keyed by the disk's id (or
// path, for older hosts).
type DiskInfo struct {
	ID        string     `json:"id,omitempty"`
	Path      string     `json:"path,omitempty"`
	DiskSpeed *DiskSpeed `json:"disk_speed,omitempty"`
}

// InstallationDiskKey is the key of the installation disk in
// host.disks_info and the path the disk speed check is asked to measure:
// its id (a /dev/disk/by-id path), else its path.
func InstallationDiskKey(h *wire.Host) string {
	if h.InstallationDiskID != "" {
		return h.InstallationDiskID
	}
	return h.InstallationDiskPath
}

// errUnreadable: a stored check result that does not parse.
var errUnreadable = errors.New("the stored result does not parse")

// installationDiskSpeed finds the speed test of the installation disk and
// judges it against the role's threshold. ds is nil when nothing was
// measured.
func (c *hostContext) installationDiskSpeed() (key string, ds *DiskSpeed, o Outcome, err error) {
	key = InstallationDiskKey(c.host)
	// assisted reports an error while no installation disk is chosen;
	// nothing can have been measured then.
	if key == "" {
		return "", nil, NotMeasured, nil
	}
	if c.checks.Disks.Unreadable {
		return key, nil, Failed, errUnreadable
	}
	infos := c.checks.Disks.Value
	info, ok := infos[key]
	if !ok && c.host.InstallationDiskPath != "" {
		info, ok = infos[c.host.InstallationDiskPath]
	}
	if !ok || info.DiskSpeed == nil || !info.DiskSpeed.Tested {
		return key, nil, NotMeasured, nil
	}
	ds = info.DiskSpeed
	limit := c.req.InstallationDiskSpeedThresholdMs
	if ds.ExitCode == 0 && (limit <= 0 || ds.SpeedMs <= limit) {
		return key, ds, Passed, nil
	}
	return key, ds, Failed, nil
}

// hostInstallationDiskSpeed reads the result of the speed test on the
// installation disk. A measurement slower than the threshold fails even
// when stored with exit code 0 (assisted's service turns a slow reading
// into a non-zero exit code before storing it).
func hostInstallationDiskSpeed(c *hostContext) (wire.ValidationStatus, string) {
	key, ds, o, err := c.installationDiskSpeed()
	switch {
	case err != nil:
		return wire.ValidationError, "Validation error"
	case o == NotMeasured:
		return wire.ValidationSuccess, "Speed of installation disk has not yet been measured"
	case o == Passed:
		return wire.ValidationSuccess, "Speed of installation disk is sufficient"
	}
	const msg = "While preparing the previous installation the installation disk speed measurement failed or was found to be insufficient"
	if ds.ExitCode == 0 || ds.SpeedMs > 0 {
		return wire.ValidationFailure, fmt.Sprintf("%s: disk %s took %d ms to sync, more than the %d ms threshold", msg, key, ds.SpeedMs, c.req.InstallationDiskSpeedThresholdMs)
	}
	if ds.Reason != "" {
		return wire.ValidationFailure, fmt.Sprintf("%s: the measurement on disk %s failed with exit code %d: %s", msg, key, ds.ExitCode, ds.Reason)
	}
	return wire.ValidationFailure, fmt.Sprintf("%s: the measurement on disk %s failed with exit code %d", msg, key, ds.ExitCode)
}
