package assisted

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

const testRelease = "registry.example.com:5000/ocp/release:4.18.0-x86_64"

// preparingCluster is a ready three-master cluster with a release image,
// installed: its hosts are preparing-for-installation. The cluster's own
// preparation stays under way (heldInstaller), so the hosts' preparation
// checks alone decide their statuses.
func preparingCluster(t *testing.T) (e *env, clusterID, ie string, hosts []string) {
	t.Helper()
	installer := heldInstaller(t)
	e = newEnv(t, func(c *Config) { c.Installer = installer })
	p := clusterParams()
	p.OCPReleaseImage = testRelease
	clusterID, ie = e.cluster(p)
	for i := range 3 {
		hosts = append(hosts, e.addHost(ie, masterInv(t, "master-"+string(rune('0'+i)), 10+i)))
	}
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusReady {
		t.Fatalf("cluster %s (%s), want ready", c.Status, c.StatusInfo)
	}
	if _, err := e.s.InstallCluster(e.ctx, clusterID); err != nil {
		t.Fatalf("InstallCluster: %v", err)
	}
	return e, clusterID, ie, hosts
}

// heldInstaller is an openshift-install that never answers: it waits on a
// FIFO nobody writes to, until the service stops and its context kills it.
// A preparation that finished would move every prepared host on to
// installing at once, whenever it happened to finish.
func heldInstaller(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "never-written")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	exe := filepath.Join(dir, "openshift-install")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexec cat "+fifo+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// preparationSteps hands out the host's steps and returns them by type.
func (e *env) preparationSteps(ie, id string) map[wire.StepType]*wire.Step {
	e.t.Helper()
	out := map[wire.StepType]*wire.Step{}
	for _, st := range e.checkIn(ie, id).Instructions {
		out[st.StepType] = st
	}
	return out
}

func (e *env) reply(ie, id string, st *wire.Step, code int64, v any) {
	e.t.Helper()
	out := ""
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			e.t.Fatal(err)
		}
		out = string(b)
	}
	if err := e.s.PostStepReply(e.ctx, ie, id, &wire.StepReply{StepType: st.StepType, StepID: st.StepID, ExitCode: code, Output: out}); err != nil {
		e.t.Fatalf("PostStepReply %s: %v", st.StepType, err)
	}
}

func pulled(name string) *wire.ContainerImageAvailability {
	return &wire.ContainerImageAvailability{Name: name, Result: wire.ContainerImageAvailabilityResultSuccess, SizeBytes: 4e6, Time: 2, DownloadRate: 2}
}

// TestPreparationChecks: while the cluster prepares, each host is asked to
// measure its installation disk (with the agent's 8 minute timeout) and to
// pull the release image (16 minutes); their replies land in disks_info and
// images_status, and the host moves to preparing-successful only when both
// passed. The checks are not handed out again while awaited.
func TestPreparationChecks(t *testing.T) {
	e, clusterID, ie, hosts := preparingCluster(t)
	for _, id := range hosts {
		h := e.host(ie, id)
		if h.Status != wire.HostStatusPreparingForInstallation {
			t.Fatalf("host %s, want preparing-for-installation", h.Status)
		}
		steps := e.preparationSteps(ie, id)
		ds, img := steps[wire.StepTypeInstallationDiskSpeedCheck], steps[wire.StepTypeContainerImageAvailability]
		if ds == nil || img == nil || len(steps) != 2 {
			t.Fatalf("preparation steps %v, want the disk speed and image checks", steps)
		}
		wantDS := []string{`{"path":"` + validation.InstallationDiskKey(h) + `"}`, "480"}
		if diff := cmp.Diff(wantDS, ds.Args); diff != "" {
			t.Errorf("disk speed args (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{`{"timeout":960,"images":["` + testRelease + `"]}`}, img.Args); diff != "" {
			t.Errorf("image args (-want +got):\n%s", diff)
		}
		if again := e.preparationSteps(ie, id); len(again) != 0 {
			t.Errorf("checks handed out again while awaited: %v", again)
		}
		e.reply(ie, id, ds, 0, wire.DiskSpeedCheckResponse{Path: validation.InstallationDiskKey(h), IOSyncDuration: 3})
		if h := e.host(ie, id); h.Status != wire.HostStatusPreparingForInstallation {
			t.Errorf("after the disk speed only: %s, want still preparing", h.Status)
		}
		e.reply(ie, id, img, 0, wire.ContainerImageAvailabilityResponse{Images: []*wire.ContainerImageAvailability{pulled(testRelease)}})
		h = e.host(ie, id)
		if h.Status != wire.HostStatusPreparingSuccessful {
			t.Errorf("after both checks: %s (%s), want preparing-successful", h.Status, h.StatusInfo)
		}
		var infos map[string]validation.DiskInfo
		if err := json.Unmarshal([]byte(h.DisksInfo), &infos); err != nil {
			t.Fatalf("disks_info %q: %v", h.DisksInfo, err)
		}
		if d := infos[validation.InstallationDiskKey(h)].DiskSpeed; d == nil || !d.Tested || d.SpeedMs != 3 || d.ExitCode != 0 {
			t.Errorf("disks_info %s: want the disk tested at 3 ms", h.DisksInfo)
		}
		if r := resultsByID(t, h.ValidationsInfo)["container-images-available"]; r.Status != wire.ValidationSuccess {
			t.Errorf("container-images-available %s: %s", r.Status, r.Message)
		}
	}
	// The cluster moves on to installing once its install files are made
	// too (last_installation_preparation, issue #6).
	want := ": New image status " + testRelease + ". result: success. time: 2.00 seconds; size: 4000000.00 bytes; download rate: 2.00 MBps"
	evs := e.events(EventsQuery{ClusterID: clusterID})
	if !slices.ContainsFunc(evs, func(ev *wire.Event) bool { return ev.Name == evHostImageStatus && strings.HasSuffix(ev.Message, want) }) {
		t.Errorf("no image_status_updated event %q in\n%s", want, strings.Join(eventLines(evs), "\n"))
	}
}

// TestPreparationImagePullFails: a failed pull fails the host's
// preparation with container-images-available naming the image, the
// cluster goes back to ready; the next install pulls again rather than
// failing on the old result.
func TestPreparationImagePullFails(t *testing.T) {
	e, clusterID, ie, hosts := preparingCluster(t)
	bad := hosts[2] // last: a failure sends the cluster back to ready
	for _, id := range hosts {
		steps := e.preparationSteps(ie, id)
		if len(steps) != 2 {
			t.Fatalf("host %s (%s): steps %v", e.host(ie, id).Status, e.host(ie, id).StatusInfo, steps)
		}
		e.reply(ie, id, steps[wire.StepTypeInstallationDiskSpeedCheck], 0, wire.DiskSpeedCheckResponse{Path: validation.InstallationDiskKey(e.host(ie, id)), IOSyncDuration: 1})
		im := pulled(testRelease)
		code := int64(0)
		if id == bad {
			im, code = &wire.ContainerImageAvailability{Name: testRelease, Result: wire.ContainerImageAvailabilityResultFailure}, 2
		}
		e.reply(ie, id, steps[wire.StepTypeContainerImageAvailability], code, wire.ContainerImageAvailabilityResponse{Images: []*wire.ContainerImageAvailability{im}})
	}
	h := e.host(ie, bad)
	r := resultsByID(t, h.ValidationsInfo)["container-images-available"]
	if r.Status != wire.ValidationFailure || !strings.Contains(r.Message, testRelease) {
		t.Errorf("container-images-available %s %q, want a failure naming %s", r.Status, r.Message, testRelease)
	}
	if h.Status != wire.HostStatusPreparingFailed && h.Status != wire.HostStatusKnown {
		t.Errorf("host with the failed pull: %s (%s), want preparing-failed (or known after the cluster gave up)", h.Status, h.StatusInfo)
	}
	c := e.getCluster(clusterID)
	if c.Status != wire.ClusterStatusReady {
		t.Fatalf("cluster %s (%s), want ready after a failed preparation", c.Status, c.StatusInfo)
	}
	for _, id := range hosts {
		if h := e.host(ie, id); h.Status != wire.HostStatusKnown {
			t.Errorf("host %s after the failed preparation, want known", h.Status)
		}
	}

	// Install again: the failed image is asked for again, the pulled ones
	// not; the disks are not measured again.
	if _, err := e.s.InstallCluster(e.ctx, clusterID); err != nil {
		t.Fatalf("InstallCluster again: %v", err)
	}
	if h := e.host(ie, bad); h.Status != wire.HostStatusPreparingForInstallation || h.ImagesStatus != "{}" {
		t.Errorf("bad host again: %s images_status %q, want preparing with the failure forgotten", h.Status, h.ImagesStatus)
	}
	steps := e.preparationSteps(ie, bad)
	if len(steps) != 1 || steps[wire.StepTypeContainerImageAvailability] == nil {
		t.Fatalf("second preparation steps %v, want only the image check", steps)
	}
	if got := e.preparationSteps(ie, hosts[0]); len(got) != 0 {
		t.Errorf("a host with everything measured got %v", got)
	}
	e.reply(ie, bad, steps[wire.StepTypeContainerImageAvailability], 0, wire.ContainerImageAvailabilityResponse{Images: []*wire.ContainerImageAvailability{pulled(testRelease)}})
	if h := e.host(ie, bad); h.Status != wire.HostStatusPreparingSuccessful {
		t.Errorf("host after the second pull %s (%s), want preparing-successful", h.Status, h.StatusInfo)
	}
}

// TestPreparationSlowDisk: a disk slower than the role's threshold (10 ms)
// or a failed measurement sends the host to insufficient with the
// validation naming the disk and the figures.
func TestPreparationSlowDisk(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int64
		out  any
		want string
	}{
		{"slow", 0, wire.DiskSpeedCheckResponse{IOSyncDuration: 25}, "took 25 ms to sync, more than the 10 ms threshold"},
		{"failed", -1, nil, "failed with exit code -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clusterID, ie, hosts := preparingCluster(t)
			id := hosts[2]
			key := validation.InstallationDiskKey(e.host(ie, id))
			out := tc.out
			if ds, ok := out.(wire.DiskSpeedCheckResponse); ok {
				ds.Path = key
				out = ds
			}
			e.reply(ie, id, e.preparationSteps(ie, id)[wire.StepTypeInstallationDiskSpeedCheck], tc.code, out)
			h := e.host(ie, id)
			r := resultsByID(t, h.ValidationsInfo)["sufficient-installation-disk-speed"]
			if h.Status != wire.HostStatusInsufficient || r.Status != wire.ValidationFailure || !strings.Contains(r.Message, key) || !strings.Contains(r.Message, tc.want) {
				t.Errorf("host %s, sufficient-installation-disk-speed %s %q; want insufficient and a failure naming %s and %q", h.Status, r.Status, r.Message, key, tc.want)
			}
			if c := e.getCluster(clusterID); c.Status == wire.ClusterStatusInstalling || c.Status == wire.ClusterStatusPreparingForInstallation {
				t.Errorf("cluster %s, want out of preparation", c.Status)
			}
		})
	}
}

// TestPreparationCheckReissuedAfterTimeout: a check the agent never
// answered is handed out again once its timeout passed.
func TestPreparationCheckReissuedAfterTimeout(t *testing.T) {
	e, _, ie, hosts := preparingCluster(t)
	first := e.preparationSteps(ie, hosts[0])
	e.clock.Advance(8*time.Minute + time.Second)
	again := e.preparationSteps(ie, hosts[0])
	if again[wire.StepTypeInstallationDiskSpeedCheck] == nil || again[wire.StepTypeInstallationDiskSpeedCheck].StepID == first[wire.StepTypeInstallationDiskSpeedCheck].StepID {
		t.Errorf("disk speed check not handed out again after its timeout: %v", again)
	}
	if again[wire.StepTypeContainerImageAvailability] != nil {
		t.Error("image check handed out again before its 16 minutes")
	}
}
