package tui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// waitingFor says in one sentence what the installation waits for now,
// from the cluster's status and its hosts: the line a person at the rack
// reads first.
func waitingFor(s Snapshot) string {
	return waitingForHosts(s, parseHosts(s, nil))
}

// waitingForHosts is waitingFor with the hosts already parsed (sorted by
// name): the dashboard parses them once per snapshot.
func waitingForHosts(s Snapshot, hosts []parsedHost) string {
	if s.Err != nil {
		return reconnecting(s)
	}
	c := s.Cluster
	if c == nil {
		return "Waiting for node zero's service to register the cluster"
	}
	switch c.Status {
	case wire.ClusterStatusInsufficient, wire.ClusterStatusPendingForInput, wire.ClusterStatusReady, wire.ClusterStatusAddingHosts:
		return waitingBeforeInstall(s, hosts)
	case wire.ClusterStatusPreparingForInstallation:
		for _, h := range hosts {
			if h.Host.Status == wire.HostStatusPreparingFailed {
				return "Preparing the installation failed on " + h.Name + ": " + hostFailure(h.Host)
			}
		}
		if names := namesWhere(hosts, func(h parsedHost) bool { return h.Host.Status == wire.HostStatusPreparingForInstallation }); len(names) > 0 {
			return fmt.Sprintf("Preparing the installation files (%s checking %s disk speed and pulling images)",
				nameList(names), theirs(len(names)))
		}
		return "Preparing the installation files"
	case wire.ClusterStatusInstalling, wire.ClusterStatusInstallingPendingUserAction:
		return waitingWhileInstalling(c, hosts)
	case wire.ClusterStatusFinalizing:
		if c.Progress != nil && c.Progress.FinalizingStage != "" {
			return "Finalizing the installation: " + lowerFirst(string(c.Progress.FinalizingStage))
		}
		return "Finalizing the installation"
	case wire.ClusterStatusInstalled:
		if c.StatusInfo != "" && c.StatusInfo != "Cluster is installed" {
			return "Installation complete: " + c.StatusInfo
		}
		return "Installation complete"
	case wire.ClusterStatusError:
		return failedSentence(c, hosts)
	case wire.ClusterStatusCancelled:
		return "Installation cancelled"
	}
	return withInfo("The cluster is "+string(c.Status), c.StatusInfo)
}

// waitingBeforeInstall: hosts still to come, then the first host that is
// not ready and why, then the cluster's own failing validations.
func waitingBeforeInstall(s Snapshot, hosts []parsedHost) string {
	c := s.Cluster
	clusterVals := parseClusterValidations(c)

	discovered := 0
	for _, h := range hosts {
		if h.Inventory != nil {
			discovered++
		}
	}
	if missing, names := missingHosts(clusterVals); missing > 0 {
		sentence := fmt.Sprintf("Waiting for %s to be discovered (%d of %d expected)",
			countNoun(missing, "more host", "more hosts"), discovered, discovered+missing)
		if len(names) > 0 {
			sentence += ": " + nameList(names)
		}
		return sentence
	}
	if want := int(c.ControlPlaneCount); len(hosts) < want {
		return fmt.Sprintf("Waiting for %s to be discovered (%d of %d control plane hosts)",
			countNoun(want-len(hosts), "more host", "more hosts"), len(hosts), want)
	}
	if len(hosts) == 0 {
		return "Waiting for hosts to be discovered"
	}

	for _, h := range hosts {
		if sentence := hostBlocking(h); sentence != "" {
			return sentence
		}
	}

	for _, v := range clusterVals {
		if v.failing() && v.ID != string(wire.ClusterValidationIDAllHostsAreReadyToInstall) {
			return "Waiting for the cluster configuration: " + v.Message
		}
	}
	if c.Status == wire.ClusterStatusReady {
		return "Waiting for the installation to start"
	}
	for _, v := range clusterVals {
		if v.Status == valPending {
			return "Waiting for the cluster configuration: " + v.Message
		}
	}
	return withInfo("Waiting for the cluster to be ready", c.StatusInfo)
}

// hostBlocking is why a host is not ready to install, or "" when it is.
func hostBlocking(h parsedHost) string {
	switch h.Host.Status {
	case wire.HostStatusKnown, wire.HostStatusPreparingForInstallation, wire.HostStatusPreparingSuccessful:
		return ""
	case wire.HostStatusDiscovering:
		return "Waiting for " + h.Name + " to send its hardware inventory"
	case wire.HostStatusDisconnected:
		return "Waiting for " + h.Name + " to reconnect: it stopped reporting to node zero"
	case wire.HostStatusInsufficient, wire.HostStatusPendingForInput, wire.HostStatusPreparingFailed:
		if v, ok := firstBlockingValidation(h.Validations); ok {
			return "Waiting for " + h.Name + ": " + v.Message
		}
	case wire.HostStatusResettingPendingUserAction:
		return "Waiting for " + h.Name + " to be booted from the discovery image again"
	}
	return withInfo("Waiting for "+h.Name+" ("+string(h.Host.Status)+")", h.Host.StatusInfo)
}

// advisoryValidations never keep a host from installing (the service shows
// them but gates nothing on them; docs/reference/assisted-service.md §2.4), so they are
// never given as the reason a host waits.
var advisoryValidations = map[wire.HostValidationID]bool{
	wire.HostValidationIDNTPSynced:                          true,
	wire.HostValidationIDMTUValid:                           true,
	wire.HostValidationIDInventoryNotPartiallyTruncated:     true,
	wire.HostValidationIDReleaseDomainNameResolvedCorrectly: true,
	wire.HostValidationIDContainerImagesAvailable:           true,
	wire.HostValidationIDOcsRequirementsSatisfied:           true,
}

// firstBlockingValidation is the first failing validation that gates the
// host, in parseValidations' order (hardware first).
func firstBlockingValidation(vals []validation) (validation, bool) {
	for _, v := range vals {
		if v.failing() && !advisoryValidations[wire.HostValidationID(v.ID)] && v.Message != "" {
			return v, true
		}
	}
	return validation{}, false
}

// parseClusterValidations reads the cluster's validations_info; an
// unreadable one holds none here (the page shows the parse error).
func parseClusterValidations(c *wire.Cluster) []validation {
	vals, _ := parseValidations(c.ValidationsInfo)
	return vals
}

// configuredHostRE finds the host configs named in the message of node
// zero's configured-hosts-registered validation: "master-2 (MAC …)".
var configuredHostRE = regexp.MustCompile(`([^\s:;()]+) \(MAC [^)]*\)`)

// missingHosts counts the hosts of the config image that have not
// registered yet, from the configured-hosts-registered validation (pending
// during the grace time, failing after it), with their config names.
// The API says nothing else about how many hosts are expected.
func missingHosts(vals []validation) (int, []string) {
	for _, v := range vals {
		if v.ID != string(wire.ClusterValidationIDConfiguredHostsRegistered) || (v.Status != valPending && !v.failing()) {
			continue
		}
		var names []string
		for _, m := range configuredHostRE.FindAllStringSubmatch(v.Message, -1) {
			names = append(names, m[1])
		}
		return len(names), names
	}
	return 0, nil
}

// Install stages per role, in order (docs/reference/assisted-service.md §7.3).
var (
	stagesBootstrap = []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
		wire.HostStageCopyingRegistryDataToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForBootkube,
		wire.HostStageWaitingForController, wire.HostStageRebooting, wire.HostStageConfiguring, wire.HostStageJoined, wire.HostStageDone}
	stagesMaster = []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
		wire.HostStageCopyingRegistryDataToDisk, wire.HostStageRebooting, wire.HostStageConfiguring, wire.HostStageJoined, wire.HostStageDone}
	stagesWorker = []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
		wire.HostStageWaitingForControlPlane, wire.HostStageRebooting, wire.HostStageWaitingForIgnition, wire.HostStageConfiguring,
		wire.HostStageJoined, wire.HostStageDone}
	stagesSNO = []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWaitingForBootkube,
		wire.HostStageWritingImageToDisk, wire.HostStageCopyingRegistryDataToDisk, wire.HostStageRebooting, wire.HostStageJoined, wire.HostStageDone}
)

// stagesOf is the stage list of h's role in a cluster of cpc control
// plane hosts.
func stagesOf(h *wire.Host, cpc int64) []wire.HostStage {
	switch {
	case cpc == 1:
		return stagesSNO
	case h.Bootstrap:
		return stagesBootstrap
	case h.Role == wire.HostRoleWorker:
		return stagesWorker
	}
	return stagesMaster
}

// diskWritten reports whether h is past writing its disk.
func diskWritten(h *wire.Host, cpc int64) bool {
	if h.Status == wire.HostStatusInstalled {
		return true
	}
	stage := wire.HostStage(hostStage(h))
	stages := stagesOf(h, cpc)
	i := slices.Index(stages, stage)
	last := slices.Index(stages, wire.HostStageCopyingRegistryDataToDisk)
	if last < 0 {
		last = slices.Index(stages, wire.HostStageWritingImageToDisk)
	}
	return i > last
}

// joined reports whether h has joined the cluster.
func joined(h *wire.Host) bool {
	st := wire.HostStage(hostStage(h))
	return h.Status == wire.HostStatusInstalled || st == wire.HostStageJoined || st == wire.HostStageDone
}

// waitingWhileInstalling: a failed host, a host waiting for the person,
// disks being written, then the control plane and the workers joining.
func waitingWhileInstalling(c *wire.Cluster, hosts []parsedHost) string {
	for _, h := range hosts {
		if r := hostFailure(h.Host); r != "" {
			return "Installation failing on " + h.Name + ": " + r
		}
	}
	for _, h := range hosts {
		if h.Host.Status == wire.HostStatusInstallingPendingUserAction {
			return "Waiting for " + h.Name + " to boot from its installation disk: check its boot order"
		}
	}
	cpc := c.ControlPlaneCount
	if names := namesWhere(hosts, func(h parsedHost) bool { return !diskWritten(h.Host, cpc) }); len(names) > 0 {
		return fmt.Sprintf("Waiting for %s to write %s", nameList(names), theirs(len(names))+" "+plural(len(names), "disk", "disks"))
	}
	controlPlane := func(h parsedHost) bool { return h.Host.Role != wire.HostRoleWorker }
	// The bootstrap host joins last: it waits for the other control plane
	// hosts, so it is named only once they have joined.
	if names := namesWhere(hosts, func(h parsedHost) bool {
		return controlPlane(h) && !h.Host.Bootstrap && !joined(h.Host)
	}); len(names) > 0 {
		return "Waiting for the control plane to join (" + nameList(names) + " not joined)"
	}
	if names := namesWhere(hosts, func(h parsedHost) bool { return controlPlane(h) && !joined(h.Host) }); len(names) > 0 {
		return "Waiting for the control plane to join (" + nameList(names) + " not joined)"
	}
	if names := namesWhere(hosts, func(h parsedHost) bool { return !joined(h.Host) }); len(names) > 0 {
		return "Waiting for the workers to join (" + nameList(names) + " not joined)"
	}
	return "Waiting for the cluster to finish installing"
}

func namesWhere(hosts []parsedHost, pred func(parsedHost) bool) []string {
	var names []string
	for _, h := range hosts {
		if pred(h) {
			names = append(names, h.Name)
		}
	}
	return names
}

// nameList is "a", "a and b", "a, b, c" or "a, b, c and 4 more": a
// sentence stays one line with 200 hosts.
func nameList(names []string) string {
	const most = 3
	switch {
	case len(names) == 1:
		return names[0]
	case len(names) <= most:
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

func theirs(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func countNoun(n int, one, many string) string { return fmt.Sprintf("%d %s", n, plural(n, one, many)) }

func withInfo(s, info string) string {
	if info == "" {
		return s
	}
	return s + ": " + info
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// reconnecting is the sentence while node zero does not answer: where the
// console tries, why it failed in a few words, and how old the data is.
// A source that cannot try yet (SetupError) says what it misses.
func reconnecting(s Snapshot) string {
	var se *SetupError
	if errors.As(s.Err, &se) {
		return "Cannot ask node zero yet: " + se.Reason
	}
	sentence := "Reconnecting to node zero"
	var fe *FetchError
	if errors.As(s.Err, &fe) && fe.URL != "" {
		sentence += " at " + fe.URL
	}
	sentence += " (" + shortCause(s.Err) + ")"
	if !s.At.IsZero() {
		sentence += "; last data from " + s.At.UTC().Format(time.TimeOnly) + " UTC"
	}
	return sentence
}

// shortCause says in a few words why a fetch failed.
func shortCause(err error) string {
	var opErr *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case wire.StatusCode(err) != 0:
		return fmt.Sprintf("service answered %d", wire.StatusCode(err))
	case errors.As(err, &opErr):
		return opErr.Err.Error()
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}
