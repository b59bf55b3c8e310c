package register

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// TestRunStartsTheInstall: Run registers, applies host configs as hosts
// arrive, explains what it waits for, and starts the installation once the
// three expected masters are known and the cluster is ready.
func TestRunStartsTheInstall(t *testing.T) {
	s := newService(t)
	set := manifestSet(t, compactSpec())
	dir := t.TempDir()
	hc := filepath.Join(dir, "hostconfig")
	var cfgs []manifests.HostConfig
	for i := range 3 {
		cfgs = append(cfgs, manifests.HostConfig{Name: "master-" + string(rune('0'+i)), MACs: []string{macOf(i)}, Role: "master"})
	}
	if err := manifests.WriteHostConfigs(hc, cfgs); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var statuses []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		id  string
		err error
	}
	done := make(chan result, 1)
	go func() {
		id, err := Run(ctx, RunConfig{
			Client: s.user, Set: set, HostConfigDir: hc, FailuresFile: filepath.Join(dir, "host-config-failures"),
			PendingFile: filepath.Join(dir, "pending.json"), Interval: 20 * time.Millisecond,
			Status: func(st string) { mu.Lock(); statuses = append(statuses, st); mu.Unlock() },
		})
		done <- result{id, err}
	}()
	// Wait for the registration, then bring the hosts.
	var ieID string
	for ieID == "" {
		ies, err := s.user.ListInfraEnvs(ctx, "")
		if err == nil && len(ies) == 1 {
			ieID = ies[0].ID
		}
		select {
		case r := <-done:
			t.Fatalf("Run returned before any host: %v", r.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	for i := range 3 {
		s.addHost(t, ieID, inventory("master-"+string(rune('0'+i)), macOf(i), 80+i))
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("Run: %v\nstatuses: %q", r.err, statuses)
	}
	c, err := s.user.GetCluster(ctx, r.id)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != v2.ClusterStatusPreparingForInstallation {
		t.Errorf("cluster is %s after Run, want preparing-for-installation", c.Status)
	}
	for _, h := range c.Hosts {
		if h.Role != v2.HostRoleMaster {
			t.Errorf("%s role %s, want master from its host config", h.RequestedHostname, h.Role)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	waited := false
	for _, st := range statuses {
		if strings.HasPrefix(st, "Waiting for") {
			waited = true
		}
	}
	if !waited || !strings.HasPrefix(statuses[len(statuses)-1], "Cluster installation started") {
		t.Errorf("statuses do not say what Run waited for and did: %q", statuses)
	}
	if _, err := os.Stat(filepath.Join(dir, "pending.json")); err != nil {
		t.Errorf("install-config overrides not kept: %v", err)
	}
}
