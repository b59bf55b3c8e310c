package watch

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/wire"
)

// fakeCluster is the installed cluster's API as a script: each
// GetClusterVersion answers with the next step (the last one repeats).
// It stands in for the API in the step tests; TestSandboxWaitForFollowsCluster
// runs wait-for against a real kube-apiserver.
type fakeCluster struct {
	mu      sync.Mutex
	steps   []fakeStep
	calls   int
	onFirst func() // runs at the first call (node zero reboots)
}

type fakeStep struct {
	err       error
	cv        *kube.ClusterVersion
	operators []kube.ClusterOperator
}

func (f *fakeCluster) Server() string { return "https://api.ostest.example.com:6443" }

func (f *fakeCluster) step() fakeStep {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == 0 && f.onFirst != nil {
		f.onFirst()
	}
	s := f.steps[min(f.calls, len(f.steps)-1)]
	f.calls++
	return s
}

func (f *fakeCluster) GetClusterVersion(context.Context, string) (*kube.ClusterVersion, error) {
	s := f.step()
	return s.cv, s.err
}

func (f *fakeCluster) ListClusterOperators(context.Context) ([]kube.ClusterOperator, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.steps[min(f.calls, len(f.steps))-1].operators, nil
}

func fakeCV(available, progressing kube.ConditionStatus, msg string) *kube.ClusterVersion {
	cv := &kube.ClusterVersion{Metadata: kube.ObjectMeta{Name: "version"}}
	cv.Status.Desired.Version = "4.18.0"
	cv.Status.Conditions = []kube.Condition{{Type: kube.Available, Status: available}, {Type: kube.Failing, Status: kube.False},
		{Type: kube.Progressing, Status: progressing, Message: msg}}
	if available == kube.True {
		cv.Status.History = []kube.UpdateHistory{{State: kube.UpdateCompleted, Version: "4.18.0"}}
	}
	return cv
}

func fakeCO(name string, available kube.ConditionStatus) kube.ClusterOperator {
	co := kube.ClusterOperator{Metadata: kube.ObjectMeta{Name: name}}
	co.Status.Conditions = []kube.Condition{{Type: kube.Available, Status: available, Reason: "Starting", Message: name + " is starting"},
		{Type: kube.Degraded, Status: kube.False}}
	return co
}

// runKubeWait runs install-complete against n's REST API and api, on
// real time with a short interval, its password file in dir; it returns
// the lines and the error.
func runKubeWait(t *testing.T, n *wfNode, api clusterAPI, dir string, timeout time.Duration) ([]string, error) {
	t.Helper()
	c, err := wire.NewClient(n.srv.URL, wire.WithWatcherToken(n.tokens[auth.Watcher]), wire.WithHTTPClient(n.srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	out := &wfBuffer{}
	pw := filepath.Join(dir, "kubeadmin-password")
	if err := os.WriteFile(pw, []byte("Abcde-fghij-klmno-pqrst\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := defaultWaitConfig()
	cfg.target, cfg.client, cfg.tokenGiven, cfg.log = InstallComplete, c, true, Logger(out, slog.LevelDebug)
	cfg.interval, cfg.timeout, cfg.passwordFile = 5*time.Millisecond, timeout, pw
	cfg.kube = &ClusterFollower{api: api, kubeconfig: "/install/auth/kubeconfig", log: cfg.log}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = waitForTarget(ctx, cfg)
	return out.take(), err
}

// TestWaitForFollowsClusterAfterNodeZero: once the bootstrap is complete,
// node zero goes away and the install is followed through the cluster's
// API until its ClusterVersion is Available, not Progressing, not Failing;
// node zero's "installed" alone does not end the wait.
func TestWaitForFollowsClusterAfterNodeZero(t *testing.T) {
	n := newWFNode(t)
	n.ready()
	n.installing()
	boot := n.bootstrap()
	n.progress(boot, wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
		wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForBootkube, wire.HostStageWaitingForController, wire.HostStageRebooting)
	unreachable := errors.New("dial tcp 192.168.111.5:6443: connect: connection refused")
	api := &fakeCluster{onFirst: n.srv.Close, steps: []fakeStep{
		{err: unreachable},
		{err: unreachable},
		{cv: fakeCV(kube.False, kube.True, "Working towards 4.18.0: 12 of 800 done (1% complete)"),
			operators: []kube.ClusterOperator{fakeCO("console", kube.False), fakeCO("etcd", kube.True)}},
		{cv: fakeCV(kube.True, kube.True, "Working towards 4.18.0: 800 of 800 done (100% complete)"),
			operators: []kube.ClusterOperator{fakeCO("console", kube.True), fakeCO("etcd", kube.True)}},
		{cv: fakeCV(kube.True, kube.False, "Cluster version is 4.18.0"),
			operators: []kube.ClusterOperator{fakeCO("console", kube.True), fakeCO("etcd", kube.True)}},
	}}
	dir := t.TempDir()
	lines, err := runKubeWait(t, n, api, dir, 0)
	if err != nil {
		t.Fatalf("wait-for install-complete: %v\n%s", err, strings.Join(lines, "\n"))
	}
	wfContainsInOrder(t, "follow", lines,
		wfInfo("Bootstrap is complete"),
		"for the cluster at https://api.ostest.example.com:6443 to initialize...",
		wfInfo("Node zero's service no longer answers: node zero has rebooted into the cluster, followed through its Kubernetes API"),
		wfInfo("The cluster's Kubernetes API answers at https://api.ostest.example.com:6443"),
		`msg="Still waiting for the cluster to initialize: Working towards 4.18.0: 12 of 800 done (1% complete)"`,
		wfInfo("Cluster operators console are not available (1 of 2 available)"),
		wfInfo("All 2 cluster operators are available"),
		wfInfo("Cluster version is 4.18.0"),
		wfInfo("Install complete!"),
		wfInfo("    export KUBECONFIG=/install/auth/kubeconfig"),
		`Login to the console with user: \"kubeadmin\", and the password in `+filepath.Join(dir, "kubeadmin-password")+`"`)
	for _, l := range lines {
		if strings.Contains(l, "Abcde-fghij-klmno-pqrst") {
			t.Errorf("wait-for printed the kubeadmin password: %s", l)
		}
	}
	if api.calls < 5 {
		t.Errorf("the cluster's API was asked %d times, want the wait to last until its 5th answer", api.calls)
	}
}

// TestWaitForClusterRefusesCredentials: a kubeconfig the cluster refuses
// ends the wait at once with exit 6; one that never gets an initialized
// cluster times out naming the operators that are not available.
func TestWaitForClusterRefusesCredentials(t *testing.T) {
	for _, tc := range []struct {
		name    string
		step    fakeStep
		timeout time.Duration
		want    []string
	}{
		{name: "refused", step: fakeStep{err: &kube.APIError{Method: "GET", Path: "/apis/config.openshift.io/v1/clusterversions/version", StatusCode: 401}},
			want: []string{"the cluster's Kubernetes API refused the kubeconfig's credentials at https://api.ostest.example.com:6443"}},
		{name: "never initialized", timeout: 300 * time.Millisecond,
			step: fakeStep{cv: fakeCV(kube.False, kube.True, "Working towards 4.18.0"),
				operators: []kube.ClusterOperator{fakeCO("console", kube.False), fakeCO("etcd", kube.True)}},
			want: []string{`level=error msg="Cluster operator console Available is False with Starting: console is starting"`,
				"failed to initialize the cluster: 4.18.0: Working towards 4.18.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newWFNode(t)
			n.ready()
			n.installing()
			n.progress(n.bootstrap(), wire.HostStageStartingInstallation, wire.HostStageRebooting)
			lines, err := runKubeWait(t, n, &fakeCluster{steps: []fakeStep{tc.step}}, t.TempDir(), tc.timeout)
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitInstallFailed {
				t.Fatalf("wait-for = %v, want exit %d\n%s", err, ExitInstallFailed, strings.Join(lines, "\n"))
			}
			wfContainsInOrder(t, tc.name, append(lines, err.Error()), tc.want...)
		})
	}
}

// wfContainsInOrder fails unless each of want is part of a line of got,
// in that order.
func wfContainsInOrder(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	i := 0
	for _, line := range got {
		if i < len(want) && strings.Contains(line, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("%s: %q missing or out of order; got:\n%s", what, want[i], strings.Join(got, "\n"))
	}
}
