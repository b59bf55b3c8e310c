package register

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
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
			Interval: 20 * time.Millisecond,
			Status:   func(st string) { mu.Lock(); statuses = append(statuses, st); mu.Unlock() },
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
	if c.Status != wire.ClusterStatusPreparingForInstallation {
		t.Errorf("cluster is %s after Run, want preparing-for-installation", c.Status)
	}
	for _, h := range c.Hosts {
		if h.Role != wire.HostRoleMaster {
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
	checkUploads(t, s, r.id)

	// A restart: Run again finds everything registered and sends nothing.
	// The cluster is installing now, so a second PATCH or upload would be
	// refused with a 409 and Run would return that error; it waits instead,
	// until its context ends.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if _, err := Run(ctx2, RunConfig{Client: s.user, Set: set, Interval: 20 * time.Millisecond}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Run = %v, want it to wait (context deadline exceeded)", err)
	}
	checkUploads(t, s, r.id)
}

// checkUploads asserts the cluster carries compactSpec's overrides and
// extra manifest, each applied exactly once.
func checkUploads(t *testing.T, s *service, clusterID string) {
	t.Helper()
	ctx := context.Background()
	c, err := s.user.GetCluster(ctx, clusterID)
	if err != nil {
		t.Fatal(err)
	}
	if c.InstallConfigOverrides != `{"fips":true}` {
		t.Errorf("install_config_overrides = %q, want the AgentClusterInstall's", c.InstallConfigOverrides)
	}
	ms, err := s.user.ListClusterManifests(ctx, clusterID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Folder != "openshift" || ms[0].FileName != "99-extra.yaml" {
		t.Errorf("manifests = %v, want openshift/99-extra.yaml", ms)
	}
	if b, err := s.user.DownloadClusterManifest(ctx, clusterID, "openshift", "99-extra.yaml"); err != nil || string(b) != "kind: ConfigMap\n" {
		t.Errorf("99-extra.yaml = %q, %v; want the extra manifest", b, err)
	}
	evs, err := s.user.ListEvents(ctx, wire.EventsQuery{ClusterID: clusterID})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Name == "install_config_applied" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("install_config_applied events = %d, want 1", n)
	}
}
