package validation

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// HostChecks are the results a host's check steps reported, decoded: what
// the validations read of them. The service keeps them as values and
// renders their JSON texts (the host's free_addresses, ntp_sources,
// domain_name_resolutions, images_status and disks_info) only for the API
// and the store. The zero value is a host that has reported nothing.
type HostChecks struct {
	// FreeAddresses is free-network-addresses: the free addresses of
	// the networks the host scanned.
	FreeAddresses Reported[wire.FreeNetworksAddresses]
	// NTPSources is ntp-synchronizer: the host's time sources.
	NTPSources Reported[[]*wire.NTPSource]
	// Domains is domain-resolution: the cluster's names as the host
	// resolved them.
	Domains Reported[wire.DomainResolutionResponse]
	// Images is container-image-availability: the pulls, by image name.
	Images Reported[map[string]*wire.ContainerImageAvailability]
	// Disks is installation-disk-speed-check: the speed tests, by the
	// disk's id (or path, for older hosts).
	Disks Reported[map[string]DiskInfo]
}

// Reported is one check's result on a host.
type Reported[T any] struct {
	Value T
	// Set: a result arrived (its Value may be empty: a scan that found
	// no free address).
	Set bool
	// Unreadable: the stored text of a result does not parse
	// (ReadHostChecks); the validation that reads it reports an error,
	// as assisted's does. Set is true too.
	Unreadable bool
}

// Got is the result v, as it arrived.
func Got[T any](v T) Reported[T] { return Reported[T]{Value: v, Set: true} }

// ReadHostChecks decodes the check results a stored host document carries
// in its JSON-text fields. An empty field is a check that has not
// reported; one that does not parse is marked Unreadable.
func ReadHostChecks(h *wire.Host) HostChecks {
	var c HostChecks
	c.FreeAddresses = readJSON[wire.FreeNetworksAddresses](h.FreeAddresses)
	c.NTPSources = readJSON[[]*wire.NTPSource](h.NTPSources)
	c.Domains = readJSON[wire.DomainResolutionResponse](h.DomainNameResolutions)
	if strings.TrimSpace(h.ImagesStatus) != "" {
		m, err := parseImagesStatus(h.ImagesStatus)
		c.Images = Reported[map[string]*wire.ContainerImageAvailability]{Value: m, Set: true, Unreadable: err != nil}
	}
	if strings.TrimSpace(h.DisksInfo) != "" {
		var m map[string]DiskInfo
		err := json.Unmarshal([]byte(h.DisksInfo), &m)
		c.Disks = Reported[map[string]DiskInfo]{Value: m, Set: true, Unreadable: err != nil}
	}
	return c
}

func readJSON[T any](text string) Reported[T] {
	var r Reported[T]
	if strings.TrimSpace(text) == "" {
		return r
	}
	r.Set = true
	if err := json.Unmarshal([]byte(text), &r.Value); err != nil {
		var zero T
		r.Value, r.Unreadable = zero, true
	}
	return r
}

// parseImagesStatus reads host.images_status: assisted stores a JSON
// object from image name to its availability; a JSON list of
// availabilities is accepted too.
func parseImagesStatus(s string) (map[string]*wire.ContainerImageAvailability, error) {
	out := map[string]*wire.ContainerImageAvailability{}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		var list []*wire.ContainerImageAvailability
		if err := json.Unmarshal([]byte(s), &list); err != nil {
			return nil, fmt.Errorf("parse images_status: %w", err)
		}
		for _, a := range list {
			if a != nil {
				out[a.Name] = a
			}
		}
		return out, nil
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("parse images_status: %w", err)
	}
	return out, nil
}

// ReadMajorityGroups decodes a cluster's stored
// connectivity_majority_groups: not Set when empty, Unreadable when it does
// not parse; "null" is groups that list none.
func ReadMajorityGroups(text string) Reported[*Connectivity] {
	r := readJSON[*Connectivity](text)
	if r.Set && !r.Unreadable && r.Value == nil {
		r.Value = &Connectivity{}
	}
	return r
}

// orNone returns c, or the checks of a host that has reported nothing.
func (c *HostChecks) orNone() *HostChecks {
	if c == nil {
		return &HostChecks{}
	}
	return c
}
