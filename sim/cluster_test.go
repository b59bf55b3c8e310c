package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

// host is a v2 host at a stage, for the operator gates.
func host(role wire.HostRole, stage wire.HostStage) *wire.Host {
	h := &wire.Host{Role: role, Status: wire.HostStatusInstallingInProgress, Progress: &wire.HostProgressInfo{CurrentStage: stage}}
	if stage == wire.HostStageDone {
		h.Status = wire.HostStatusInstalled
	}
	return h
}

func TestOperatorAvailable(t *testing.T) {
	m, w := wire.HostRoleMaster, wire.HostRoleWorker
	for _, tc := range []struct {
		name  string
		hosts []*wire.Host
		want  []string // of etcd, network, ingress, an operator of no group
	}{
		{"none", nil, nil},
		{"a master rebooting", []*wire.Host{host(m, wire.HostStageJoined), host(m, wire.HostStageRebooting), host(w, wire.HostStageDone)}, nil},
		{"masters joined", []*wire.Host{host(m, wire.HostStageJoined), host(m, wire.HostStageDone), host(w, wire.HostStageRebooting)}, []string{"etcd"}},
		{"masters done", []*wire.Host{host(m, wire.HostStageDone), host(m, wire.HostStageDone), host(w, wire.HostStageConfiguring)}, []string{"etcd", "network"}},
		{"every host done", []*wire.Host{host(m, wire.HostStageDone), host(w, wire.HostStageDone)}, []string{"etcd", "network", "ingress", "some-operator"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, name := range []string{"etcd", "network", "ingress", "some-operator"} {
				if operatorAvailable(name, tc.hosts) {
					got = append(got, name)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("available (-want +got):\n%s", d)
			}
		})
	}
}
