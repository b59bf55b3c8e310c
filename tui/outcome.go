package tui

// How an installation ended or stands, for a person at the rack: which
// host failed and why (the dashboard's top sentence), each host's install
// result apart from its validations (the INSTALL column), and what to do
// next (the line under the sentence: retry after a failure, what follows
// an installed cluster). Pure, like dashboard_render.go.

import (
	"slices"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// abortedInfo is the status_info the service gives the hosts it stops
// because another host failed (assisted's "aborting due to cluster
// errors"): they are not the cause.
const abortedInfo = "Host is part of a cluster that failed to install"

// failedInfoPrefix starts the status_info of a host that reported stage
// Failed: "Failed - <progress_info>".
const failedInfoPrefix = "Failed - "

// hostFailure is why h failed, "" when it did not fail by itself: the
// progress info of its Failed stage, else its status_info. A host stopped
// because another failed (abortedInfo) did not fail by itself.
func hostFailure(h *wire.Host) string {
	failedStage := h.Progress != nil && h.Progress.CurrentStage == wire.HostStageFailed
	switch {
	case failedStage && h.Progress.ProgressInfo != "":
		return h.Progress.ProgressInfo
	case h.Status != wire.HostStatusError && h.Status != wire.HostStatusPreparingFailed && !failedStage:
		return ""
	case h.StatusInfo == abortedInfo:
		return ""
	}
	info := strings.TrimPrefix(h.StatusInfo, failedInfoPrefix)
	if info == "" || info == "Failed" {
		info = "failed"
	}
	return info
}

// failureCause is the host whose own failure stopped the installation and
// why, in table order; ok is false when no host says (the cluster's
// status_info is then all there is).
func failureCause(hosts []parsedHost) (name, reason string, ok bool) {
	for _, h := range hosts {
		if r := hostFailure(h.Host); r != "" {
			return h.Name, r, true
		}
	}
	return "", "", false
}

// failedSentence is the top sentence of a failed installation: the
// failing host and its reason, else the cluster's status_info.
func failedSentence(c *wire.Cluster, hosts []parsedHost) string {
	if name, reason, ok := failureCause(hosts); ok {
		return "Installation failed on " + name + ": " + reason
	}
	return withInfo("Installation failed", c.StatusInfo)
}

// clusterFailed reports an installation that ended without a cluster.
func clusterFailed(c *wire.Cluster) bool {
	return c != nil && (c.Status == wire.ClusterStatusError || c.Status == wire.ClusterStatusCancelled)
}

// resettable reports whether the retry path starts with a reset: the
// installation failed or was cancelled.
func resettable(c *wire.Cluster) bool { return clusterFailed(c) }

// installCell is a host's INSTALL column: how its own installation ends
// or stands, apart from its validations. A host that never joined a failed
// cluster is ✖ even though its validations passed.
func installCell(h *wire.Host, c *wire.Cluster) hostCell {
	stage := wire.HostStage(hostStage(h))
	switch {
	case h.Status == wire.HostStatusInstalled || stage == wire.HostStageDone:
		return hostCell{Text: "✓ done"}
	case hostFailure(h) != "":
		return hostCell{Text: "✖ failed", Bad: true}
	case stage == wire.HostStageJoined:
		return hostCell{Text: "✓ joined"}
	case clusterFailed(c):
		if pastReboot(h, c.ControlPlaneCount) {
			return hostCell{Text: "✖ not joined", Bad: true}
		}
		return hostCell{Text: "✖ stopped", Bad: true}
	case h.Status == wire.HostStatusInstallingPendingUserAction:
		return hostCell{Text: "✖ boot order", Bad: true}
	case installing(c):
		return hostCell{Text: "…"}
	}
	return hostCell{}
}

// pastReboot reports whether h has rebooted into its installed disk: its
// stage is Rebooting or later in its role's stage list.
func pastReboot(h *wire.Host, cpc int64) bool {
	stages := stagesOf(h, cpc)
	i := slices.Index(stages, wire.HostStage(hostStage(h)))
	return i >= 0 && i >= slices.Index(stages, wire.HostStageRebooting)
}

// nextStep is the line under the top sentence: what the person does now.
// After a failure, the retry path (reset the cluster, reboot the hosts),
// naming the key when the console offers it (resetKey) and the API call
// otherwise, and leaving the reboot out when the hosts reboot themselves
// (selfReboot: the sandbox's); at installed, what comes next and how to
// leave. "" otherwise.
func nextStep(s Snapshot, resetKey, selfReboot bool) string {
	c := s.Cluster
	if c == nil || s.Err != nil {
		return ""
	}
	switch {
	case resettable(c):
		reboot := ", then reboot every host from the discovery image."
		if selfReboot {
			reboot = "; the hosts then reboot into discovery by themselves."
		}
		if resetKey {
			return "To retry, press r to reset the cluster" + reboot
		}
		// The path below the API's base (wire.APIBasePath), short enough
		// to stay on one line with the id.
		call := "POST …/v2/clusters/" + c.ID + "/actions/reset"
		if selfReboot {
			return "To retry, reset the cluster: " + call + " with the user token" + reboot
		}
		return "To retry, reset the cluster and reboot every host from the discovery image. Reset: " + call + " with the user token."
	case c.Status == wire.ClusterStatusInstalled:
		return "Done. Next: reach the cluster with auth/kubeconfig and log in as kubeadmin with auth/kubeadmin-password (both written by nodezero create config-image). Press q to leave this console."
	}
	return ""
}

// HostName is the name a person knows h by, for a line outside the
// dashboard (the sandbox's progress lines): its requested hostname, else
// its inventory's, else the start of its id: what is known, the id only
// when nothing else is.
func HostName(h *wire.Host) string {
	return hostName(h, newParseCache().inventory(h.ID, h.Inventory))
}

// ProgressText is a host's install progress as one phrase: the stage, and
// its info after a colon ("Rebooting: rebooting in 1ms"); "" before the
// installation.
func ProgressText(p *wire.HostProgressInfo) string {
	if p == nil || p.CurrentStage == "" {
		return ""
	}
	if p.ProgressInfo == "" {
		return string(p.CurrentStage)
	}
	return string(p.CurrentStage) + ": " + p.ProgressInfo
}
