package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/kube/localapi"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sandbox"
	"github.com/nodezero/nodezero/sim"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// runSandboxBinary runs `nodezero sandbox` from the built binary, with its
// own hardware trees and its disks kept in a tmpfs of the test's (the
// tests read them back), and returns its summary and output.
func runSandboxBinary(t *testing.T, dir string, args ...string) (sandbox.Summary, string, error) {
	t.Helper()
	cmd := exec.Command(nodezeroBinary(t), append([]string{"sandbox", "--dir", dir, "--disks", shmDisks(t, dir), "--keep", "--timeout", "4m", "--image-size", "16"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	var sum sandbox.Summary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatalf("no summary (%v): %v\n%s", runErr, err, out.String())
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	return sum, out.String(), runErr
}

// runSandboxKept runs `nodezero sandbox --keep-running` from the built
// binary; once the install is over (the sandbox says its hosts keep
// running, or it ended), check looks at what still runs; then the sandbox
// is stopped with SIGTERM, as ^C stops it. It returns the summary and the
// output.
func runSandboxKept(t *testing.T, dir string, check func(sum sandbox.Summary, out string), args ...string) (sandbox.Summary, string, error) {
	t.Helper()
	cmd := exec.Command(nodezeroBinary(t), append([]string{"sandbox", "--dir", dir, "--disks", shmDisks(t, dir), "--keep", "--timeout", "4m", "--image-size", "16", "--keep-running"}, args...)...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A check that fails ends the test before the SIGTERM below: the
	// sandbox, its hosts and its kube-apiserver must not outlive it.
	waited := false
	t.Cleanup(func() {
		if !waited {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			pr.Close()
		}
	})
	pw.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(pr)
	kept := false
	for !kept && sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		kept = sc.Text() == "hosts keep running; interrupt to stop them"
	}
	var sum sandbox.Summary
	if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err == nil {
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
	}
	if kept {
		check(sum, out.String())
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	rest, _ := io.ReadAll(pr)
	out.Write(rest)
	runErr := cmd.Wait()
	waited = true
	if !kept && runErr == nil {
		runErr = errors.New("the sandbox ended without keeping its hosts running")
	}
	if sum.ClusterID == "" {
		t.Fatalf("no summary (%v)\n%s", runErr, out.String())
	}
	return sum, out.String(), runErr
}

// checkKubeAPI is the installed cluster's side of a finished sandbox
// install: kubectl with install/auth/kubeconfig, whose CA and client
// certificate are create config-image's, finds the ClusterVersion
// Available and every cluster operator Available.
func checkKubeAPI(t *testing.T, dir string, sum sandbox.Summary) {
	t.Helper()
	kubectl, err := localapi.LookKubectl()
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "install", "auth", "kubeconfig")
	if sum.KubeAPI == "" || sum.Kubeconfig != kc {
		t.Errorf("summary: kube API %q, kubeconfig %q; want the API and %s", sum.KubeAPI, sum.Kubeconfig, kc)
	}
	st, err := loadOrCreateState(filepath.Join(dir, "install"))
	if err != nil {
		t.Fatal(err)
	}
	created, err := kube.ParseKubeconfig(st.Kubeconfig(sandbox.ClusterName, sandbox.BaseDomain), "create config-image's")
	if err != nil {
		t.Fatal(err)
	}
	given, err := kube.LoadKubeconfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(given.CAData, created.CAData) || !bytes.Equal(given.CertData, created.CertData) || !bytes.Equal(given.KeyData, created.KeyData) {
		t.Error("auth/kubeconfig's CA or client certificate is not create config-image's")
	}
	if given.Server != sum.KubeAPI || given.TLSServerName != "api."+sandbox.ClusterName+"."+sandbox.BaseDomain {
		t.Errorf("auth/kubeconfig: server %s for %s, want %s for api.%s.%s", given.Server, given.TLSServerName, sum.KubeAPI, sandbox.ClusterName, sandbox.BaseDomain)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", kc}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := run("get", "clusterversion")
	t.Logf("kubectl get clusterversion:\n%s", out)
	if !regexp.MustCompile(`(?m)^version\s+4\.18\.0\s+True\s+False\s+\S+\s+Cluster version is 4\.18\.0$`).MatchString(out) {
		t.Errorf("kubectl get clusterversion:\n%s\nwant version 4.18.0, Available True, Progressing False", out)
	}
	out = run("get", "clusteroperators", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Available")].status}{"\n"}{end}`)
	lines := strings.Fields(out)
	if len(lines) != len(localapi.DefaultOperators) {
		t.Errorf("kubectl get clusteroperators: %q, want %d operators", lines, len(localapi.DefaultOperators))
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, "=True") {
			t.Errorf("operator %s, want Available True", l)
		}
	}
}

// shmDisks is where a sandbox test's disks live: a tmpfs, so that the
// disk speed check measures memory, not a loaded CI machine's disk. One
// directory per test directory, removed with it.
func shmDisks(t *testing.T, dir string) string {
	t.Helper()
	d := filepath.Join("/dev/shm", "nodezero-test-"+filepath.Base(filepath.Dir(dir))+"-"+filepath.Base(dir))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// sandboxEvents reads the cluster's events from the summary's record of
// node zero's API. The sandbox has stopped node zero, so they are read from
// its store through a fresh service process.
func sandboxEvents(t *testing.T, dir string, sum sandbox.Summary) []*wire.Event {
	t.Helper()
	var zero sandbox.HostSummary
	for _, h := range sum.Hosts {
		if h.Bootstrap {
			zero = h
		}
	}
	if zero.Root == "" {
		t.Fatalf("no bootstrap host in %+v", sum.Hosts)
	}
	s := startService(t, filepath.Join(zero.Root, dataDirPath), freePort(t))
	evs, err := s.user.ListEvents(context.Background(), wire.EventsQuery{ClusterID: sum.ClusterID})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestSandboxInstalls(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three whole sandbox installs (minutes)")
	}
	cases := []struct {
		name             string
		masters, workers int
	}{
		{"3+2", 3, 2},
		{"compact", 3, 0},
		{"sno", 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var sum sandbox.Summary
			var out string
			var err error
			if tc.name == "3+2" {
				// The installed cluster's Kubernetes API: the install
				// completes once its ClusterVersion is Available, and
				// it answers the user's kubeconfig while the sandbox
				// keeps running.
				mode, kubeChecked := kubeAPIMode(t), false
				var wf *waitForRun
				if mode == "yes" {
					wf = startWaitForDir(t, filepath.Join(dir, "install"))
				}
				sum, out, err = runSandboxKept(t, dir, func(sum sandbox.Summary, out string) {
					if mode == "yes" {
						checkKubeAPI(t, dir, sum)
						checkWaitForFollowed(t, wf, dir, sum)
						kubeChecked = true
					}
				}, "--masters", itoa(tc.masters), "--workers", itoa(tc.workers), "--kube-api", mode)
				if mode == "yes" && !kubeChecked && err == nil {
					t.Error("the kube API was not checked")
				}
			} else {
				sum, out, err = runSandboxBinary(t, dir, "--masters", itoa(tc.masters), "--workers", itoa(tc.workers))
			}
			if err != nil || sum.Status != wire.ClusterStatusInstalled {
				t.Fatalf("sandbox: %v, cluster %s (%s)\n%s", err, sum.Status, sum.StatusInfo, out)
			}
			if len(sum.Hosts) != tc.masters+tc.workers {
				t.Fatalf("hosts %d, want %d", len(sum.Hosts), tc.masters+tc.workers)
			}
			payload, err := diskwrite.LoadPayload(filepath.Join(dir, "payload"))
			if err != nil {
				t.Fatal(err)
			}
			reboots := map[string]onhost.BootDisk{}
			for _, h := range sum.Hosts {
				if h.Status != wire.HostStatusInstalled || h.Boots != 2 {
					t.Errorf("%s: %s after %d boots, want installed after 2 (%s)", h.Name, h.Status, h.Boots, h.StatusInfo)
				}
				// Every disk read back: the image digest, and this host's
				// own Ignition.
				d, err := sim.ReadBootDisk(h.Root)
				if err != nil || d == nil {
					t.Fatalf("%s: boot disk record: %v", h.Name, err)
				}
				reboots[h.Name] = *d
				ign, err := diskwrite.Verify(d.Disk, payload.OS)
				if err != nil {
					t.Errorf("%s: disk %s: %v", h.Name, d.Disk, err)
					continue
				}
				files, err := sim.IgnitionFiles(ign)
				if err != nil {
					t.Fatalf("%s: %v", h.Name, err)
				}
				wantRole := "master"
				if h.Role == wire.HostRoleWorker {
					wantRole = "worker"
				}
				if got := strings.TrimSpace(files["/etc/nodezero/role"]); got != wantRole {
					t.Errorf("%s: role on disk %q, want %q", h.Name, got, wantRole)
				}
				if got := strings.TrimSpace(files["/etc/hostname"]); got != h.Name {
					t.Errorf("%s: hostname on disk %q", h.Name, got)
				}
				if got := strings.TrimSpace(files["/etc/nodezero/host-id"]); got != h.HostID {
					t.Errorf("%s: host id on disk %q, want %s", h.Name, got, h.HostID)
				}
			}

			// No secret in the logs, events, watcher responses or
			// wait-for's output; files holding one are 0600, and ABI's
			// files have ABI's modes (secrets_test.go).
			checkSandboxSecrets(t, dir, sum, out)

			// Stages arrived in order for every role, and node zero, the
			// bootstrap host, rebooted last.
			evs := sandboxEvents(t, dir, sum)
			stages := map[string][]wire.HostStage{}
			var rebootOrder []string
			for _, e := range evs {
				if e.Name != "host_install_progress_updated" || e.HostID == nil {
					continue
				}
				for _, st := range allStages {
					if strings.Contains(e.Message, "reached installation stage "+string(st)) {
						if s := stages[*e.HostID]; len(s) == 0 || s[len(s)-1] != st {
							stages[*e.HostID] = append(stages[*e.HostID], st)
						}
						if st == wire.HostStageRebooting {
							rebootOrder = append(rebootOrder, *e.HostID)
						}
					}
				}
			}
			for _, h := range sum.Hosts {
				want := wantStages(h, tc.masters)
				if !slices.Equal(stages[h.HostID], want) {
					t.Errorf("%s stages:\n got %q\nwant %q", h.Name, stages[h.HostID], want)
				}
				if h.Bootstrap && (len(rebootOrder) == 0 || rebootOrder[len(rebootOrder)-1] != h.HostID) {
					t.Errorf("node zero %s did not reboot last: %q", h.Name, rebootOrder)
				}
			}
		})
	}
}

var allStages = []wire.HostStage{
	wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWaitingForBootkube,
	wire.HostStageWritingImageToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForController,
	wire.HostStageRebooting, wire.HostStageWaitingForIgnition, wire.HostStageConfiguring, wire.HostStageJoined, wire.HostStageDone,
}

// wantStages is what the sandbox reports per role: assisted's lists less
// "Copying registry data to disk" (no registry data on this payload).
func wantStages(h sandbox.HostSummary, masters int) []wire.HostStage {
	switch {
	case masters == 1:
		return []wire.HostStage{"Starting installation", "Installing", "Waiting for bootkube", "Writing image to disk", "Rebooting", "Joined", "Done"}
	case h.Bootstrap:
		return []wire.HostStage{"Starting installation", "Installing", "Writing image to disk", "Waiting for control plane", "Waiting for bootkube", "Waiting for controller", "Rebooting", "Configuring", "Joined", "Done"}
	case h.Role == wire.HostRoleWorker:
		return []wire.HostStage{"Starting installation", "Installing", "Writing image to disk", "Waiting for control plane", "Rebooting", "Waiting for ignition", "Configuring", "Joined", "Done"}
	}
	return []wire.HostStage{"Starting installation", "Installing", "Writing image to disk", "Rebooting", "Configuring", "Joined", "Done"}
}

func itoa(n int) string { return strconv.Itoa(n) }

// kubeAPIMode is yes where the local API's tools are (and must be, under
// CI=true), else no, said in the test's log.
func kubeAPIMode(t *testing.T) string {
	t.Helper()
	if _, err := localapi.FindTools(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Logf("the installed cluster's kube API is not checked: %v", err)
		return "no"
	}
	return "yes"
}

// A control-plane host that never joins: node zero waits, gives up
// without rebooting, and the cluster says why.
func TestSandboxControlPlaneNeverJoins(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a sandbox install that waits out the control-plane timeout")
	}
	dir := t.TempDir()
	sum, out, err := runSandboxBinary(t, dir, "--masters", "3", "--workers", "0", "--fault-never-join", "master-2", "--control-plane-timeout", "20s")
	if err == nil {
		t.Fatalf("sandbox succeeded with a host that never joins\n%s", out)
	}
	for _, h := range sum.Hosts {
		if !h.Bootstrap {
			continue
		}
		if d, _ := sim.ReadBootDisk(h.Root); d != nil {
			t.Errorf("node zero rebooted (%+v)", d)
		}
		if h.Status != wire.HostStatusError || !strings.Contains(h.StatusInfo, "master-2") || !strings.Contains(h.StatusInfo, "did not join") {
			t.Errorf("node zero %s: %q, want error naming master-2 that did not join", h.Status, h.StatusInfo)
		}
	}
	if sum.Status != wire.ClusterStatusError {
		t.Errorf("cluster %s (%s), want error", sum.Status, sum.StatusInfo)
	}
	// A failed install uploads its hosts' logs: no secret in them either.
	checkSandboxSecrets(t, dir, sum, out)
	if !strings.Contains(out, "retry ") || !strings.Contains(out, "--dir "+dir+" --resume") {
		t.Errorf("the failed sandbox does not say how to retry (--resume):\n%s", out)
	}

	// The retry: --resume resets the failed cluster (assisted's reset
	// flow), the hosts reboot into discovery, register again, and the
	// same cluster installs (the fault is not given again).
	sum2, out2, err := runSandboxBinary(t, dir, "--resume")
	if err != nil {
		t.Fatalf("sandbox --resume of the failed install: %v\n%s", err, out2)
	}
	if sum2.Status != wire.ClusterStatusInstalled || sum2.ClusterID != sum.ClusterID {
		t.Errorf("after --resume: cluster %s %s, want %s installed", sum2.ClusterID, sum2.Status, sum.ClusterID)
	}
	for _, want := range []string{"resetting it and installing again", "resetting-pending-user-action: rebooting it into discovery"} {
		if !strings.Contains(out2, want) {
			t.Errorf("the retry's output lacks %q:\n%s", want, out2)
		}
	}
	for _, h := range sum2.Hosts {
		if h.Status != wire.HostStatusInstalled {
			t.Errorf("after the retry %s is %s (%s)", h.Name, h.Status, h.StatusInfo)
		}
	}
}

// A payload with one flipped byte is caught before any host reboots.
func TestSandboxCorruptPayload(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a sandbox install")
	}
	// The payload beside the sandbox's directory: a --dir holding
	// anything but a sandbox is refused.
	dir, payload := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(payload, 0o755); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	img, err := diskwrite.BuildImage(&raw, diskwrite.ImageSpec{Size: 16 << 20, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	b := raw.Bytes()
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(filepath.Join(payload, "os.raw"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	img.File = "os.raw"
	images := diskwrite.ReleaseImages{Installer: "localhost/ocp/installer:4.18.0", Controller: "localhost/ocp/controller:4.18.0",
		MCO: "localhost/ocp/mco:4.18.0", MustGather: "localhost/ocp/must-gather:4.18.0"}
	if err := diskwrite.WritePayload(payload, &diskwrite.Payload{ReleaseImage: "localhost/ocp/release:4.18.0", OpenshiftVersion: "4.18.0", OS: img, Images: images}); err != nil {
		t.Fatal(err)
	}
	sum, out, err := runSandboxBinary(t, dir, "--masters", "1", "--workers", "0", "--payload", payload)
	if err == nil {
		t.Fatalf("sandbox succeeded with a corrupt payload\n%s", out)
	}
	for _, h := range sum.Hosts {
		if d, _ := sim.ReadBootDisk(h.Root); d != nil {
			t.Errorf("%s rebooted a corrupt disk", h.Name)
		}
		if h.Status != wire.HostStatusError || !strings.Contains(h.StatusInfo, "digest mismatch") {
			t.Errorf("%s: %s %q, want error with the digest mismatch", h.Name, h.Status, h.StatusInfo)
		}
	}
}

// A disk smaller than the image is refused, and left as it was.
func TestSandboxDiskTooSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a sandbox install")
	}
	dir := t.TempDir()
	disks := filepath.Join(shmDisks(t, dir), "master-0")
	if err := os.MkdirAll(disks, 0o755); err != nil {
		t.Fatal(err)
	}
	small := bytes.Repeat([]byte{0xA5}, 8<<20)
	for _, name := range []string{"sda", "nvme0n1"} {
		if err := os.WriteFile(filepath.Join(disks, name), small, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sum, out, err := runSandboxBinary(t, dir, "--masters", "1", "--workers", "0")
	if err == nil {
		t.Fatalf("sandbox succeeded on a too small disk\n%s", out)
	}
	if len(sum.Hosts) != 1 || sum.Hosts[0].Status != wire.HostStatusError || !strings.Contains(sum.Hosts[0].StatusInfo, "too small") {
		t.Fatalf("hosts %+v, want master-0 in error with the disk too small\n%s", sum.Hosts, out)
	}
	for _, name := range []string{"sda", "nvme0n1"} {
		b, err := os.ReadFile(filepath.Join(disks, name))
		if err != nil {
			t.Fatal(err)
		}
		// The disk speed check wrote its first MiB; the rest is untouched.
		if !bytes.Equal(b[1<<20:], small[1<<20:]) || len(b) != len(small) {
			t.Errorf("disk %s changed by the refused install", name)
		}
	}
}

// TestSandboxNetns: `sandbox --netns` installs a 3+2 cluster with every
// host in a network namespace of its own on a test bed (its hardware
// tree's NIC and MAC, an address of the bed's /24), node zero's API over
// HTTPS reached from inside node zero's namespace; the namespaces are gone
// afterwards.
func TestSandboxNetns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a sandbox install in network namespaces")
	}
	testbed.NeedRoot(t)
	for _, tool := range []string{"ip", "dnsmasq", "docker-registry"} {
		testbed.NeedTool(t, tool)
	}
	dir := t.TempDir()
	sum, out, err := runSandboxBinary(t, dir, "--netns", "--api-tls", "--masters", "3", "--workers", "2")
	if err != nil || sum.Status != wire.ClusterStatusInstalled {
		t.Fatalf("sandbox --netns: %v, cluster %s (%s)\n%s", err, sum.Status, sum.StatusInfo, out)
	}
	u, err := url.Parse(sum.URL)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := netip.ParseAddr(u.Hostname()); err != nil || a.IsLoopback() || !a.IsPrivate() || u.Scheme != "https" {
		t.Errorf("node zero's API at %s, want https on a private address of the bed", sum.URL)
	}
	if !strings.Contains(out, "kube API step skipped: ") {
		t.Errorf("the output does not say the kube API step was skipped in namespaces:\n%s", out)
	}
	list, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v %s", err, list)
	}
	if len(sum.Hosts) != 5 {
		t.Fatalf("hosts %d, want 5", len(sum.Hosts))
	}
	for _, h := range sum.Hosts {
		if h.Status != wire.HostStatusInstalled || h.Boots != 2 {
			t.Errorf("%s: %s after %d boots, want installed after 2 (%s)", h.Name, h.Status, h.Boots, h.StatusInfo)
		}
		if h.Namespace == "" || !strings.HasSuffix(h.Namespace, "-"+h.Name) {
			t.Errorf("%s ran in namespace %q, want one of its own", h.Name, h.Namespace)
		} else if strings.Contains(string(list), h.Namespace) {
			t.Errorf("%s's namespace %s is left after the sandbox ended", h.Name, h.Namespace)
		}
	}
}

// runSandboxFrom runs `nodezero sandbox` from the built binary in cwd
// with only the given flags (its own hardware trees, disks where it puts
// them) and returns its output.
func runSandboxFrom(t *testing.T, cwd string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(nodezeroBinary(t), append([]string{"sandbox", "--timeout", "4m", "--image-size", "16"}, args...)...)
	cmd.Dir = cwd
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSandboxRunTwice is the sandbox as a new user meets it: the binary run
// from / (no checkout: the hardware trees are its own), disks in /dev/shm
// when asked and gone after the install, a healthy install that shows no
// failure, the next steps at the end; then the same --dir again is refused
// with what to do, --resume of the installed cluster only reports it, and
// --fresh installs anew. A failure before any host started leaves no
// directory behind.
func TestSandboxRunTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two sandbox installs")
	}
	base := t.TempDir()
	t.Run("failure leaves nothing", func(t *testing.T) {
		dir := filepath.Join(base, "bad-hw")
		out, err := runSandboxFrom(t, "/", "--dir", dir, "--hw", filepath.Join(base, "no-such-trees"), "--masters", "1", "--workers", "0")
		if err == nil {
			t.Fatalf("sandbox with a missing --hw succeeded:\n%s", out)
		}
		if exists(dir) {
			t.Errorf("the failed run left %s behind", dir)
		}
	})

	dir := filepath.Join(base, "sb")
	shm := func() []string {
		m, _ := filepath.Glob("/dev/shm/nodezero-sandbox-" + filepath.Base(dir) + "-*")
		return m
	}
	out, err := runSandboxFrom(t, "/", "--dir", dir, "--masters", "1", "--workers", "0", "--disks-tmpfs", "--kube-api", "no")
	if err != nil {
		t.Fatalf("sandbox from /: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		for _, p := range shm() {
			os.RemoveAll(p)
		}
	})
	if left := shm(); len(left) != 0 {
		t.Errorf("the installed sandbox left its disks in /dev/shm: %q", left)
	}
	for _, want := range []string{"disks in /dev/shm/nodezero-sandbox-", "a tmpfs", "space: disks ", "(removed)", "next steps", "kubeconfig          " + filepath.Join(dir, "install", "auth", "kubeconfig"),
		"stops with the sandbox", "nodezero sandbox clean --dir " + dir, "--resume", "--fresh"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	first, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum sandbox.Summary
	if err := json.Unmarshal(first, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Status != wire.ClusterStatusInstalled || sum.NextSteps.Kubeconfig == "" || sum.NextSteps.APIState != "stops with the sandbox" {
		t.Errorf("summary: %s, next steps %+v; want installed with the next steps", sum.Status, sum.NextSteps)
	}
	st, err := loadOrCreateState(filepath.Join(dir, "install"))
	if err != nil {
		t.Fatal(err)
	}
	if tok := st.Tokens["userAuth"]; tok == "" || bytes.Contains(first, []byte(tok)) || bytes.Contains(first, []byte(`"user_token"`)) {
		t.Errorf("summary.json holds the user token (or none was made):\n%s", first)
	}
	checkHealthy(t, dir, sum)

	out, err = runSandboxFrom(t, "/", "--dir", dir, "--masters", "1", "--workers", "0")
	if err == nil || !strings.Contains(out, "--resume") || !strings.Contains(out, "--fresh") || !strings.Contains(out, sum.ClusterID) {
		t.Errorf("a second run in %s: %v, want refused naming the cluster, --resume and --fresh:\n%s", dir, err, out)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "summary.json")); !bytes.Equal(again, first) {
		t.Errorf("the refused run changed summary.json:\n%s", again)
	}

	out, err = runSandboxFrom(t, "/", "--dir", dir, "--resume")
	if err != nil || !strings.Contains(out, "cluster "+sum.ClusterID+" is installed; nothing to resume") || !strings.Contains(out, "stopped with the sandbox") || strings.Contains(out, "started") {
		t.Errorf("--resume of the installed sandbox: %v, want it reported installed, the API stopped, nothing started:\n%s", err, out)
	}

	out, err = runSandboxFrom(t, "/", "--dir", dir, "--fresh", "--masters", "1", "--workers", "0", "--kube-api", "no")
	var fresh sandbox.Summary
	if b, rerr := os.ReadFile(filepath.Join(dir, "summary.json")); rerr == nil {
		_ = json.Unmarshal(b, &fresh)
	}
	if err != nil || fresh.Status != wire.ClusterStatusInstalled || fresh.ClusterID == sum.ClusterID {
		t.Errorf("--fresh: %v, cluster %s %s; want a new cluster installed:\n%s", err, fresh.ClusterID, fresh.Status, out)
	}
	if exists(filepath.Join(dir, "disks")) {
		t.Errorf("the disks of the --fresh install are left in %s", filepath.Join(dir, "disks"))
	}
}

// checkHealthy: a healthy install's hosts logged no warning, and no
// validation of the cluster or its hosts fails at installed (read from
// node zero's store through a fresh service, the sandbox being stopped).
func checkHealthy(t *testing.T, dir string, sum sandbox.Summary) {
	t.Helper()
	for _, h := range sum.Hosts {
		b, err := os.ReadFile(h.Log)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				t.Errorf("%s logged: %s", h.Name, l)
			}
		}
	}
	var zero sandbox.HostSummary
	for _, h := range sum.Hosts {
		if h.Bootstrap {
			zero = h
		}
	}
	s := startService(t, filepath.Join(zero.Root, dataDirPath), freePort(t))
	c, err := s.user.GetCluster(context.Background(), sum.ClusterID)
	if err != nil {
		t.Fatal(err)
	}
	failing := func(who, info string) {
		if info == "" {
			return
		}
		var groups map[string][]struct {
			ID, Status, Message string
		}
		if err := json.Unmarshal([]byte(info), &groups); err != nil {
			t.Errorf("%s validations_info: %v", who, err)
			return
		}
		for _, vs := range groups {
			for _, v := range vs {
				if v.Status == "failure" || v.Status == "error" {
					t.Errorf("%s: validation %s is %s: %s", who, v.ID, v.Status, v.Message)
				}
			}
		}
	}
	failing("cluster", c.ValidationsInfo)
	for _, h := range c.Hosts {
		failing(h.RequestedHostname, h.ValidationsInfo)
	}
}
