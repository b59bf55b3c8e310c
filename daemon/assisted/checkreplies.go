package assisted

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"strings"

	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// The replies of the steps (steps.go): decoders, which run before the
// model lock is taken and refuse what is not valid with a 400, and the
// keepers, which store the result under the lock and mark what must be
// re-evaluated. Results are decoded through the typed model as
// assisted-service does (unknown fields dropped) and kept as Go values;
// their JSON text (docText) is made once, when they change.

// docText is the JSON text a kept result is shown and stored as.
func docText(v any) (string, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// keepResult makes v the result r, with doc its text; false when the text
// is the one kept already (the check reported the same again).
func keepResult[T any](r *validation.Reported[T], doc *string, v T) bool {
	text, ok := docText(v)
	if !ok || (r.Set && !r.Unreadable && text == *doc) {
		return false
	}
	*r, *doc = validation.Got(v), text
	return true
}

// decodeOutput decodes the output of a check that succeeded into a T; the
// output of a failed one is not kept.
func decodeOutput[T any](_ *Service, _ hostKey, r *wire.StepReply) (T, bool, error) {
	var v T
	if r.ExitCode != 0 {
		return v, false, nil
	}
	if err := wire.DecodeEmbedded(r.Output, &v); err != nil {
		return v, false, badRequest("output: %s is not valid: %v", r.StepType, err)
	}
	return v, true, nil
}

func decodeInventory(_ *Service, _ hostKey, r *wire.StepReply) (*wire.Inventory, bool, error) {
	if r.ExitCode != 0 {
		return nil, false, nil
	}
	inv := new(wire.Inventory)
	if err := json.Unmarshal([]byte(r.Output), inv); err != nil {
		return nil, false, badRequest("output: inventory is not valid JSON: %v", err)
	}
	if err := checkInventory(inv); err != nil {
		return nil, false, err
	}
	return inv, true, nil
}

// decodeNTP keeps the sources of an ntp-synchronizer reply: host.ntp_sources
// is the bare list.
func decodeNTP(s *Service, k hostKey, r *wire.StepReply) ([]*wire.NTPSource, bool, error) {
	resp, ok, err := decodeOutput[wire.NTPSynchronizationResponse](s, k, r)
	return resp.NTPSources, ok, err
}

func decodeVerifyVIPs(s *Service, k hostKey, r *wire.StepReply) (wire.VerifyVIPsResponse, bool, error) {
	resp, ok, err := decodeOutput[wire.VerifyVIPsResponse](s, k, r)
	if !ok {
		return nil, false, err
	}
	var out wire.VerifyVIPsResponse
	for _, vv := range resp {
		if vv == nil {
			continue
		}
		switch vv.Verification {
		case wire.VIPVerificationSucceeded, wire.VIPVerificationFailed, wire.VIPVerificationUnverified:
		default:
			return nil, false, badRequest("output: verify-vips: verification %q: want succeeded, failed or unverified", vv.Verification)
		}
		out = append(out, vv)
	}
	return out, true, nil
}

func decodeLeases(s *Service, k hostKey, r *wire.StepReply) (*wire.DHCPAllocationResponse, bool, error) {
	resp, ok, err := decodeOutput[wire.DHCPAllocationResponse](s, k, r)
	if !ok {
		return nil, false, err
	}
	for _, f := range []struct{ name, addr string }{{"api_vip_address", resp.APIVIPAddress}, {"ingress_vip_address", resp.IngressVIPAddress}} {
		if ip, err := netip.ParseAddr(f.addr); err != nil || !ip.Is4() {
			return nil, false, badRequest("output: dhcp-lease-allocate: %s %q is not an IPv4 address", f.name, f.addr)
		}
	}
	return &resp, true, nil
}

// A preparation check's reply is kept whatever its exit code: a failed
// measurement or pull is a result. An empty output with exit code 0 is the
// agent saying the check is already running (nothing to keep).

// diskSpeedResult is an installation-disk-speed-check reply.
type diskSpeedResult struct {
	resp     wire.DiskSpeedCheckResponse
	exitCode int64
	reason   string // a failed measurement's stderr, one line
}

// maxReason bounds the agent's words kept with a failed check.
const maxReason = 512

// decodeDiskSpeed: a failed disk speed check may have no output at all.
func decodeDiskSpeed(_ *Service, _ hostKey, r *wire.StepReply) (diskSpeedResult, bool, error) {
	out := diskSpeedResult{exitCode: r.ExitCode}
	if r.ExitCode != 0 {
		out.reason = truncate(strings.Join(strings.Fields(r.Error), " "), maxReason)
	}
	if strings.TrimSpace(r.Output) == "" {
		return out, r.ExitCode != 0, nil
	}
	if err := wire.DecodeEmbedded(r.Output, &out.resp); err != nil {
		return out, false, badRequest("output: %s is not valid: %v", r.StepType, err)
	}
	if out.resp.IOSyncDuration < 0 {
		return out, false, badRequest("output: %s: io_sync_duration %d is negative", r.StepType, out.resp.IOSyncDuration)
	}
	return out, true, nil
}

func decodeImages(_ *Service, _ hostKey, r *wire.StepReply) ([]*wire.ContainerImageAvailability, bool, error) {
	if strings.TrimSpace(r.Output) == "" {
		return nil, false, nil
	}
	var resp wire.ContainerImageAvailabilityResponse
	if err := wire.DecodeEmbedded(r.Output, &resp); err != nil {
		return nil, false, badRequest("output: %s is not valid: %v", r.StepType, err)
	}
	out := []*wire.ContainerImageAvailability{}
	for _, im := range resp.Images {
		if im == nil {
			continue
		}
		switch {
		case im.Name == "":
			return nil, false, badRequest("output: %s: an image without a name", r.StepType)
		case im.Result != wire.ContainerImageAvailabilityResultSuccess && im.Result != wire.ContainerImageAvailabilityResultFailure:
			return nil, false, badRequest("output: %s: image %q: result %q: want success or failure", r.StepType, im.Name, im.Result)
		case !finiteNonNegative(im.SizeBytes, im.Time, im.DownloadRate):
			return nil, false, badRequest("output: %s: image %q: size, time and rate must be non-negative numbers", r.StepType, im.Name)
		}
		out = append(out, im)
	}
	return out, true, nil
}

func finiteNonNegative(xs ...float64) bool {
	for _, x := range xs {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// installReply: the installer reports Failed itself when it gets that far;
// an install step that failed before (bad request, no disk) says why here.
func installReply(_ *Service, _ hostKey, r *wire.StepReply) (func(*txn, *hostRec) error, error) {
	if r.ExitCode == 0 {
		return nil, nil
	}
	reason := "installation command failed"
	if e := strings.TrimSpace(r.Error); e != "" {
		reason += ": " + truncate(e, 1024)
	}
	return func(t *txn, h *hostRec) error {
		if h.h.Status != wire.HostStatusInstalling && h.h.Status != wire.HostStatusInstallingInProgress {
			return nil
		}
		return t.fireHostReason(h, machine.TriggerHostInstallationFailed, reason)
	}, nil
}

// changedHost marks h to be written and re-evaluated.
func (t *txn) changedHost(h *hostRec) {
	t.putHost(h)
	t.touchHost(h)
}

func (t *txn) keepFreeAddresses(h *hostRec, v wire.FreeNetworksAddresses) error {
	if keepResult(&h.checks.FreeAddresses, &h.docs.freeAddresses, v) {
		t.changedHost(h)
	}
	return nil
}

func (t *txn) keepNTPSources(h *hostRec, v []*wire.NTPSource) error {
	if keepResult(&h.checks.NTPSources, &h.docs.ntpSources, v) {
		t.changedHost(h)
	}
	return nil
}

func (t *txn) keepDomains(h *hostRec, v wire.DomainResolutionResponse) error {
	if keepResult(&h.checks.Domains, &h.docs.domains, v) {
		t.changedHost(h)
	}
	return nil
}

// keepDiskSpeed records the installation disk's speed test in
// host.disks_info under the measured path (the installation disk's key when
// the agent named none), as assisted's SetDiskSpeed does.
func (t *txn) keepDiskSpeed(h *hostRec, r diskSpeedResult) error {
	path := r.resp.Path
	if path == "" {
		path = validation.InstallationDiskKey(&h.h)
	}
	if path == "" {
		return nil
	}
	infos := map[string]validation.DiskInfo{} // unreadable: start again
	if !h.checks.Disks.Unreadable {
		maps.Copy(infos, h.checks.Disks.Value)
	}
	info := infos[path]
	info.Path = path
	info.DiskSpeed = &validation.DiskSpeed{Tested: true, ExitCode: r.exitCode, SpeedMs: r.resp.IOSyncDuration, Reason: r.reason}
	infos[path] = info
	if !keepResult(&h.checks.Disks, &h.docs.disks, infos) {
		return nil
	}
	if r.exitCode != 0 {
		msg := fmt.Sprintf("Host %s: the installation disk speed check on %s failed with exit code %d", h.name(), path, r.exitCode)
		if r.reason != "" {
			msg += ": " + r.reason
		}
		t.hostEvent(h, evHostDiskSpeed, sevWarning, msg)
	}
	t.changedHost(h)
	return nil
}

// keepImages merges pulled images into host.images_status by name, as
// assisted's UpdateImageStatus does, with an event for each new result.
func (t *txn) keepImages(h *hostRec, images []*wire.ContainerImageAvailability) error {
	if len(images) == 0 {
		return nil
	}
	statuses := map[string]*wire.ContainerImageAvailability{} // unreadable: start again
	if !h.checks.Images.Unreadable {
		maps.Copy(statuses, h.checks.Images.Value)
	}
	for _, im := range images {
		if old := statuses[im.Name]; old != nil && *old == *im {
			continue
		}
		statuses[im.Name] = im
		if im.Result == wire.ContainerImageAvailabilityResultSuccess {
			t.hostEvent(h, evHostImageStatus, sevInfo, fmt.Sprintf("Host %s: New image status %s. result: %s. time: %.2f seconds; size: %.2f bytes; download rate: %.2f MBps",
				h.name(), im.Name, im.Result, im.Time, im.SizeBytes, im.DownloadRate))
		} else {
			t.hostEvent(h, evHostImageStatus, sevWarning, fmt.Sprintf("Host %s: New image status %s. result: %s", h.name(), im.Name, im.Result))
		}
	}
	if keepResult(&h.checks.Images, &h.docs.images, statuses) {
		t.changedHost(h)
	}
	return nil
}

// forgetFailedImages drops the failed pulls from host.images_status when a
// new preparation starts, so the images are pulled again rather than the
// old failure failing it at once.
func forgetFailedImages(h *hostRec) {
	if h.checks.Images.Unreadable {
		h.checks.Images, h.docs.images = validation.Reported[map[string]*wire.ContainerImageAvailability]{}, ""
		return
	}
	statuses := maps.Clone(h.checks.Images.Value)
	maps.DeleteFunc(statuses, func(_ string, a *wire.ContainerImageAvailability) bool {
		return a == nil || a.Result != wire.ContainerImageAvailabilityResultSuccess
	})
	if len(statuses) < len(h.checks.Images.Value) {
		keepResult(&h.checks.Images, &h.docs.images, statuses)
	}
}

// keepVIPVerification records what a host saw of the cluster's VIPs: a VIP
// any host found in use stays failed until a host finds it free again.
func (t *txn) keepVIPVerification(h *hostRec, vs wire.VerifyVIPsResponse) error {
	c := t.s.clusters[h.clusterID()]
	if c == nil {
		return nil
	}
	changed := false
	for _, v := range vs {
		for _, a := range c.c.APIVIPs {
			if a != nil && v.VIPType == wire.VIPTypeAPI && a.IP == v.VIP && a.Verification != v.Verification {
				a.Verification, changed = v.Verification, true
			}
		}
		for _, a := range c.c.IngressVIPs {
			if a != nil && v.VIPType == wire.VIPTypeIngress && a.IP == v.VIP && a.Verification != v.Verification {
				a.Verification, changed = v.Verification, true
			}
		}
	}
	if changed {
		t.putCluster(c)
		t.touchCluster(c)
	}
	return nil
}

// keepLeases makes the leased addresses the cluster's VIPs and keeps the
// lease texts for the next renewal, as assisted-service does with
// vip_dhcp_allocation.
func (t *txn) keepLeases(h *hostRec, r *wire.DHCPAllocationResponse) error {
	c := t.s.clusters[h.clusterID()]
	if c == nil || !dhcpVIPs(&c.c) {
		return nil
	}
	changed := false
	if len(c.c.APIVIPs) != 1 || string(c.c.APIVIPs[0].IP) != r.APIVIPAddress {
		c.c.APIVIPs = []*wire.APIVIP{{IP: wire.IP(r.APIVIPAddress), ClusterID: c.c.ID}}
		changed = true
	}
	if len(c.c.IngressVIPs) != 1 || string(c.c.IngressVIPs[0].IP) != r.IngressVIPAddress {
		c.c.IngressVIPs = []*wire.IngressVIP{{IP: wire.IP(r.IngressVIPAddress), ClusterID: c.c.ID}}
		changed = true
	}
	if r.APIVIPLease != "" && r.APIVIPLease != c.apiLease {
		c.apiLease, changed = r.APIVIPLease, true
	}
	if r.IngressVIPLease != "" && r.IngressVIPLease != c.ingressLease {
		c.ingressLease, changed = r.IngressVIPLease, true
	}
	if changed {
		t.putCluster(c)
		t.touchCluster(c)
	}
	return nil
}
