package tui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

func TestWaitingFor(t *testing.T) {
	// snap builds a snapshot of the cluster in status with the five
	// fixture hosts, changed by edit.
	snap := func(status wire.ClusterStatus, info string, edit func([]hostSpec)) Snapshot {
		specs := fiveHosts()
		if edit != nil {
			edit(specs)
		}
		return Snapshot{At: fixtureTime, Cluster: fixtureCluster(status, info, 0, nil, nil), Hosts: buildHosts(specs)}
	}
	stage := func(specs []hostSpec, stages ...wire.HostStage) {
		for i, st := range stages {
			specs[i].status, specs[i].stage = wire.HostStatusInstallingInProgress, st
		}
		specs[0].bootstrap = true
	}
	withClusterVals := func(s Snapshot, failing, pending map[string]string) Snapshot {
		c := fixtureCluster(s.Cluster.Status, s.Cluster.StatusInfo, 0, failing, pending)
		s.Cluster = c
		return s
	}
	refused := &FetchError{URL: "http://192.168.111.80:8090", Err: fmt.Errorf("list clusters: %w",
		&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})}

	tests := []struct {
		name string
		s    Snapshot
		want string
	}{
		{"reconnecting", Snapshot{At: fixtureTime, Err: refused},
			"Reconnecting to node zero at http://192.168.111.80:8090 (connection refused); last data from 09:26:53 UTC"},
		{"reconnecting before any data, 503", Snapshot{Err: &FetchError{URL: "http://127.0.0.1:8090", Err: &wire.APIError{StatusCode: 503}}},
			"Reconnecting to node zero at http://127.0.0.1:8090 (service answered 503)"},
		{"reconnecting, timeout", Snapshot{Err: &FetchError{URL: "http://127.0.0.1:8090", Err: context.DeadlineExceeded}},
			"Reconnecting to node zero at http://127.0.0.1:8090 (no answer in time)"},
		{"reconnecting, other source", Snapshot{Err: errors.New("read snapshot: bad thing")},
			"Reconnecting to node zero (bad thing)"},
		{"no cluster", Snapshot{At: fixtureTime}, "Waiting for node zero's service to register the cluster"},

		{"no hosts yet", func() Snapshot {
			s := snap(wire.ClusterStatusInsufficient, "", nil)
			s.Hosts = nil
			s.Cluster.ControlPlaneCount = 1
			return s
		}(), "Waiting for 1 more host to be discovered (0 of 1 control plane hosts)"},
		{"no hosts, no count", func() Snapshot {
			s := snap(wire.ClusterStatusPendingForInput, "", nil)
			s.Hosts, s.Cluster.ControlPlaneCount = nil, 0
			return s
		}(), "Waiting for hosts to be discovered"},
		{"fewer than the control plane", func() Snapshot {
			s := snap(wire.ClusterStatusInsufficient, "", nil)
			s.Hosts = s.Hosts[:2]
			return s
		}(), "Waiting for 1 more host to be discovered (2 of 3 control plane hosts)"},
		{"configured hosts missing", func() Snapshot {
			s := snap(wire.ClusterStatusInsufficient, "", func(h []hostSpec) { h[2].noInv, h[2].status = true, wire.HostStatusDiscovering })
			s.Hosts = s.Hosts[:3]
			return withClusterVals(s, nil, map[string]string{string(wire.ClusterValidationIDConfiguredHostsRegistered): "Waiting for configured hosts to register: " +
				"master-2 (MAC b8:ce:f6:12:34:52); worker-0 (MAC b8:ce:f6:12:34:53); worker-1 (MAC b8:ce:f6:12:34:54, b8:ce:f6:12:34:64)"})
		}(), "Waiting for 3 more hosts to be discovered (2 of 5 expected): master-2, worker-0, worker-1"},
		{"configured host missing past the grace time", func() Snapshot {
			s := snap(wire.ClusterStatusInsufficient, "", nil)
			s.Hosts = s.Hosts[:4]
			return withClusterVals(s, map[string]string{string(wire.ClusterValidationIDConfiguredHostsRegistered): "No host with these MAC addresses has registered in 10m0s: " +
				"worker-1 (MAC b8:ce:f6:12:34:54). Check that each is booted from the factory image and reaches the rendezvous IP, or correct its MAC addresses in agent-config.yaml"}, nil)
		}(), "Waiting for 1 more host to be discovered (4 of 5 expected): worker-1"},
		{"host discovering", snap(wire.ClusterStatusInsufficient, "", func(h []hostSpec) { h[3].status, h[3].noInv = wire.HostStatusDiscovering, true }),
			"Waiting for worker-0 to send its hardware inventory"},
		{"host disconnected", snap(wire.ClusterStatusInsufficient, "", func(h []hostSpec) { h[4].status = wire.HostStatusDisconnected }),
			"Waiting for worker-1 to reconnect: it stopped reporting to node zero"},
		{"first blocking host and its first gating failure", snap(wire.ClusterStatusInsufficient, "", func(h []hostSpec) {
			h[1].status = wire.HostStatusInsufficient
			h[1].failing = map[string]string{"ntp-synced": "Host couldn't synchronize with any NTP server", "has-memory-for-role": memoryFailure,
				"belongs-to-machine-cidr": "Host does not belong to machine network CIDRs"}
			h[2].status = wire.HostStatusInsufficient
			h[2].failing = map[string]string{"has-cpu-cores-for-role": "Require at least 4 CPU cores for master role, found only 2"}
		}), "Waiting for master-1: " + memoryFailure},
		{"pending for input", snap(wire.ClusterStatusPendingForInput, "User input required", func(h []hostSpec) {
			h[0].status = wire.HostStatusPendingForInput
			h[0].failing = map[string]string{"machine-cidr-defined": "Machine Network CIDR is undefined; the Machine Network CIDR can be defined by setting either the API or Ingress virtual IPs"}
		}), "Waiting for master-0: Machine Network CIDR is undefined; the Machine Network CIDR can be defined by setting either the API or Ingress virtual IPs"},
		{"insufficient host with only advisory failures", snap(wire.ClusterStatusInsufficient, "", func(h []hostSpec) {
			h[4].status, h[4].statusInfo = wire.HostStatusInsufficient, "Host cannot be installed"
			h[4].failing = map[string]string{"ntp-synced": "Host couldn't synchronize with any NTP server"}
		}), "Waiting for worker-1 (insufficient): Host cannot be installed"},
		{"host resetting", snap(wire.ClusterStatusInsufficient, "", func(h []hostSpec) { h[0].status = wire.HostStatusResettingPendingUserAction }),
			"Waiting for master-0 to be booted from the discovery image again"},
		{"cluster validation failing", withClusterVals(snap(wire.ClusterStatusInsufficient, "Cluster is not ready for install", nil), map[string]string{
			"api-vips-valid": "api vips <192.168.122.5> does not belong to machine-network-cidr <192.168.111.0/24>"}, nil),
			"Waiting for the cluster configuration: api vips <192.168.122.5> does not belong to machine-network-cidr <192.168.111.0/24>"},
		{"cluster validation pending", withClusterVals(snap(wire.ClusterStatusInsufficient, "Cluster is not ready for install", nil), nil, map[string]string{
			"api-vips-valid": "api vips 192.168.111.5 belongs to the Machine CIDR; whether it is in use is not verified yet."}),
			"Waiting for the cluster configuration: api vips 192.168.111.5 belongs to the Machine CIDR; whether it is in use is not verified yet."},
		{"insufficient, nothing named", snap(wire.ClusterStatusInsufficient, "Cluster is not ready for install", nil),
			"Waiting for the cluster to be ready: Cluster is not ready for install"},
		{"ready", snap(wire.ClusterStatusReady, "Cluster ready to be installed", nil), "Waiting for the installation to start"},
		{"adding hosts", snap(wire.ClusterStatusAddingHosts, "", func(h []hostSpec) { h[4].status, h[4].noInv = wire.HostStatusDiscovering, true }),
			"Waiting for worker-1 to send its hardware inventory"},

		{"preparing", snap(wire.ClusterStatusPreparingForInstallation, "Preparing cluster for installation", func(h []hostSpec) {
			for i := range h {
				h[i].status = wire.HostStatusPreparingSuccessful
			}
		}), "Preparing the installation files"},
		{"preparing, hosts checking", snap(wire.ClusterStatusPreparingForInstallation, "", func(h []hostSpec) {
			h[0].status = wire.HostStatusPreparingForInstallation
			h[3].status = wire.HostStatusPreparingForInstallation
		}), "Preparing the installation files (master-0, worker-0 checking their disk speed and pulling images)"},
		{"preparing failed", snap(wire.ClusterStatusPreparingForInstallation, "", func(h []hostSpec) {
			h[2].status, h[2].statusInfo = wire.HostStatusPreparingFailed, "Host failed to prepare for installation due to following failing validation(s): Failed to fetch container images needed for installation from quay.io"
		}), "Preparing the installation failed on master-2: Host failed to prepare for installation due to following failing validation(s): Failed to fetch container images needed for installation from quay.io"},

		{"installing, disks being written", snap(wire.ClusterStatusInstalling, "", func(h []hostSpec) {
			stage(h, wire.HostStageWaitingForControlPlane, wire.HostStageWritingImageToDisk, wire.HostStageInstalling,
				wire.HostStageWaitingForControlPlane, wire.HostStageStartingInstallation)
		}), "Waiting for master-1, master-2, worker-1 to write their disks"},
		{"installing, one disk", snap(wire.ClusterStatusInstalling, "", func(h []hostSpec) {
			stage(h, wire.HostStageWaitingForControlPlane, wire.HostStageCopyingRegistryDataToDisk, wire.HostStageRebooting,
				wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForControlPlane)
		}), "Waiting for master-1 to write its disk"},
		{"installing, host status installing without a stage", snap(wire.ClusterStatusInstalling, "", func(h []hostSpec) {
			for i := range h {
				h[i].status = wire.HostStatusInstalling
			}
		}), "Waiting for master-0, master-1, master-2 and 2 more to write their disks"},
		{"installing, control plane joining", snap(wire.ClusterStatusInstalling, "", func(h []hostSpec) {
			stage(h, wire.HostStageWaitingForControlPlane, wire.HostStageJoined, wire.HostStageConfiguring,
				wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForControlPlane)
		}), "Waiting for the control plane to join (master-2 not joined)"},
		{"installing, bootstrap last", snap(wire.ClusterStatusInstalling, "", func(h []hostSpec) {
			stage(h, wire.HostStageWaitingForBootkube, wire.HostStageJoined, wire.HostStageDone,
				wire.HostStageWaitingForIgnition, wire.HostStageRebooting)
		}), "Waiting for the control plane to join (master-0 not joined)"},
		{"installing, workers joining", snap(wire.ClusterStatusInstalling, "", func(h []hostSpec) {
			stage(h, wire.HostStageDone, wire.HostStageDone, wire.HostStageJoined, wire.HostStageConfiguring, wire.HostStageWaitingForIgnition)
			h[1].status = wire.HostStatusInstalled
		}), "Waiting for the workers to join (worker-0, worker-1 not joined)"},
		{"installing, all joined", snap(wire.ClusterStatusInstalling, "", func(h []hostSpec) {
			stage(h, wire.HostStageDone, wire.HostStageDone, wire.HostStageDone, wire.HostStageJoined, wire.HostStageJoined)
		}), "Waiting for the cluster to finish installing"},
		{"installing, host failed", snap(wire.ClusterStatusInstalling, "", func(h []hostSpec) {
			stage(h, wire.HostStageWaitingForControlPlane, wire.HostStageRebooting, wire.HostStageFailed)
			h[2].status, h[2].statusInfo = wire.HostStatusError, "Failed - failed to write image to disk"
		}), "Installation failing on master-2: failed to write image to disk"},
		{"installing, pending user action", snap(wire.ClusterStatusInstallingPendingUserAction, "Cluster has hosts pending user action", func(h []hostSpec) {
			stage(h, wire.HostStageWaitingForControlPlane, wire.HostStageRebooting)
			h[1].status = wire.HostStatusInstallingPendingUserAction
		}), "Waiting for master-1 to boot from its installation disk: check its boot order"},
		{"single node, writing", func() Snapshot {
			s := snap(wire.ClusterStatusInstalling, "", func(h []hostSpec) { stage(h, wire.HostStageWaitingForBootkube) })
			s.Hosts, s.Cluster.ControlPlaneCount = s.Hosts[:1], 1
			return s
		}(), "Waiting for master-0 to write its disk"},

		{"finalizing", func() Snapshot {
			s := snap(wire.ClusterStatusFinalizing, "Finalizing cluster installation", nil)
			s.Cluster.Progress = &wire.ClusterProgressInfo{TotalPercentage: 88, FinalizingStage: wire.FinalizingStageWaitingForClusterOperators}
			return s
		}(), "Finalizing the installation: waiting for cluster operators"},
		{"finalizing, no stage", snap(wire.ClusterStatusFinalizing, "", nil), "Finalizing the installation"},
		{"installed", snap(wire.ClusterStatusInstalled, "Cluster is installed", nil), "Installation complete"},
		{"installed degraded", snap(wire.ClusterStatusInstalled, "Cluster is installed but degraded", nil),
			"Installation complete: Cluster is installed but degraded"},
		{"error", snap(wire.ClusterStatusError, "cluster has hosts in error", nil), "Installation failed: cluster has hosts in error"},
		// The host that failed by itself is named with its reason, not
		// the hosts the service stopped because of it.
		{"error, the bootstrap host's control plane never joined", failedSnapshot(),
			"Installation failed on master-0: " + notJoinedReason},
		{"error, a host's status only", snap(wire.ClusterStatusError, "cluster has hosts in error", func(h []hostSpec) {
			stage(h, wire.HostStageWaitingForControlPlane, wire.HostStageRebooting, wire.HostStageFailed)
			h[0].status, h[0].statusInfo = wire.HostStatusError, abortedInfo
			h[2].status, h[2].statusInfo = wire.HostStatusError, "Failed - failed to write image to disk"
		}), "Installation failed on master-2: failed to write image to disk"},
		{"cancelled", snap(wire.ClusterStatusCancelled, "Canceled cluster installation", nil), "Installation cancelled"},
		{"unmonitored", snap(wire.ClusterStatusUnmonitored, "", nil), "The cluster is unmonitored"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitingFor(tc.s); got != tc.want {
				t.Errorf("waitingFor() = %q\nwant             %q", got, tc.want)
			}
		})
	}
}

func TestNameList(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a, b"},
		{[]string{"a", "b", "c"}, "a, b, c"},
		{[]string{"a", "b", "c", "d", "e"}, "a, b, c and 2 more"},
	}
	for _, tc := range tests {
		if got := nameList(tc.names); got != tc.want {
			t.Errorf("nameList(%q) = %q, want %q", tc.names, got, tc.want)
		}
	}
}
