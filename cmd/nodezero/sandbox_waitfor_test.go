package main

import (
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/sandbox"
)

// waitForRun is `nodezero wait-for install-complete --dir` running beside
// a sandbox install, as a user would run it from the install directory.
type waitForRun struct {
	done chan struct{}
	err  error
	out  wfBuffer // its output, read while it writes
}

// startWaitForDir starts wait-for on installDir as soon as `create
// config-image` has written it, before any host has registered.
func startWaitForDir(t *testing.T, installDir string) *waitForRun {
	t.Helper()
	bin := nodezeroBinary(t)
	w := &waitForRun{done: make(chan struct{})}
	stop := make(chan struct{})
	var cmd *exec.Cmd
	var mu sync.Mutex
	go func() {
		defer close(w.done)
		// create config-image writes auth/watcher.token after
		// rendezvousIP; both are there when it is. The sandbox then
		// points auth/kubeconfig at the API VIP: wait-for must never ask
		// the machine's resolver for the sandbox's names.
		for !exists(filepath.Join(installDir, watcherTokenFile)) || !kubeconfigAtVIP(filepath.Join(installDir, kubeconfigFile)) {
			select {
			case <-stop:
				w.err = os.ErrDeadlineExceeded
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		mu.Lock()
		cmd = exec.Command(bin, "wait-for", "install-complete", "--dir", installDir, "--log-level", "debug", "--timeout", "4m")
		cmd.Stdout, cmd.Stderr = &w.out, &w.out
		w.err = cmd.Start()
		mu.Unlock()
		if w.err == nil {
			w.err = cmd.Wait()
		}
	}()
	t.Cleanup(func() {
		close(stop)
		mu.Lock()
		if cmd != nil && cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		mu.Unlock()
		<-w.done
	})
	return w
}

// checkWaitForFollowed: wait-for, started before the install, followed
// node zero's REST API through the bootstrap, then the sandbox's
// Kubernetes API with the user's kubeconfig to "Install complete!", and
// named the user's kubeconfig and password.
func checkWaitForFollowed(t *testing.T, w *waitForRun, dir string, sum sandbox.Summary) {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("wait-for did not end within 2 minutes of the install; output:\n%s", w.out.String())
	}
	out := w.out.String()
	if w.err != nil {
		t.Fatalf("wait-for install-complete --dir: %v\n%s", w.err, out)
	}
	install := filepath.Join(dir, "install")
	pw, err := os.ReadFile(filepath.Join(install, kubeadminFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	var info []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "level=debug") {
			info = append(info, l)
		}
	}
	t.Logf("wait-for install-complete --dir, started before the install (debug lines left out):\n%s", strings.Join(info, "\n"))
	wfContainsInOrder(t, "wait-for --dir", lines,
		"Waiting for cluster install to initialize",
		`level=info msg="Cluster installation in progress"`,
		`level=info msg="Bootstrap is complete"`,
		"for the cluster at "+sum.KubeAPI+" to initialize...",
		`level=info msg="The cluster's Kubernetes API answers at `+sum.KubeAPI+`"`,
		`level=info msg="Cluster version is 4.18.0"`,
		`level=info msg="Install complete!"`,
		`level=info msg="    export KUBECONFIG=`+filepath.Join(install, kubeconfigFile)+`"`,
		`and the password in `+filepath.Join(install, kubeadminFile)+`"`)
	if strings.Contains(out, strings.TrimSpace(string(pw))) {
		t.Error("wait-for printed the kubeadmin password")
	}
}

// kubeconfigAtVIP reports whether the kubeconfig's server is an address,
// not a name.
func kubeconfigAtVIP(path string) bool {
	cfg, err := kube.LoadKubeconfig(path)
	if err != nil {
		return false
	}
	u, err := url.Parse(cfg.Server)
	if err != nil {
		return false
	}
	_, err = netip.ParseAddr(u.Hostname())
	return err == nil
}
