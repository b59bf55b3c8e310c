package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage/addnodes"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sandbox"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// Day 2 end to end (issue #20): a 3-host sandbox installed with its kube
// API and kept running; `nodezero sandbox add-nodes` adds two workers
// (both added-to-existing-cluster in their own node zero's store, two
// Ready Nodes, their CSRs approved, and `wait-for add-nodes` exits 0); a
// worker whose root device hints match no disk fails clearly on its
// console and in the monitor; an image whose tokens expired installs
// nothing and says so (65_token); a worker whose daemon is killed -9 while
// it writes its disk resumes and is added once.
func TestSandboxAddNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the day-2 sandbox install")
	}
	kubeTools(t)
	bin := nodezeroBinary(t)
	dir := t.TempDir()
	_, out, err := runSandboxKept(t, dir, func(_ sandbox.Summary, _ string) {
		kc := filepath.Join(dir, "install", "auth", "kubeconfig")
		addNodes := func(args ...string) (string, error) {
			cmd := exec.Command(bin, append([]string{"sandbox", "add-nodes", "--dir", dir, "--check-interval", "2s", "--timeout", "4m"}, args...)...)
			b, err := cmd.CombinedOutput()
			return string(b), err
		}

		t.Run("two workers", func(t *testing.T) {
			out, err := addNodes("--workers", "2")
			if err != nil {
				t.Fatalf("add-nodes: %v\n%s", err, out)
			}
			if !strings.Contains(out, "2 hosts added to cluster sandbox") {
				t.Errorf("no end line in:\n%s", out)
			}
			ad := filepath.Join(dir, sandbox.AddNodesDir, "1")
			names := []string{"extra-worker-0", "extra-worker-1"}
			for _, n := range names {
				if got := hostStatuses(t, ad, n); !slices.Equal(got, []string{string(wire.HostStatusAddedToExistingCluster)}) {
					t.Errorf("%s: its node zero's store has %v, want one host added-to-existing-cluster", n, got)
				}
			}
			c := kubeClient(t, kc)
			checkAddedNodes(t, c, names)
			// wait-for add-nodes, as a person runs it afterwards: the
			// hosts' node zeros are gone (rebooted), their Nodes Ready.
			st, err := addnodes.LoadState(ad)
			if err != nil {
				t.Fatal(err)
			}
			if st.UserToken() == "" {
				t.Fatal("no user token in the node config image's state")
			}
			hosts := hostsFlag(t, out)
			wf := exec.Command(bin, "wait-for", "add-nodes", "--dir", ad, "--hosts", hosts, "--kubeconfig", kc, "--interval", "1s", "--timeout", "2m")
			b, err := wf.CombinedOutput()
			if err != nil {
				t.Fatalf("wait-for add-nodes: %v\n%s", err, b)
			}
			for _, n := range names {
				if !strings.Contains(string(b), n+": Ready") {
					t.Errorf("wait-for add-nodes does not say %s is Ready:\n%s", n, b)
				}
			}
		})

		t.Run("root device hints match no disk", func(t *testing.T) {
			out, err := addNodes("--workers", "1", "--fault-no-disk", "extra-worker-2", "--timeout", "2m")
			if err == nil {
				t.Fatalf("add-nodes succeeded:\n%s", out)
			}
			const why = "No eligible disk matches root device hints (deviceName=/dev/sdz)"
			if !strings.Contains(out, "extra-worker-2: insufficient, and it will not fix itself") || !strings.Contains(out, why) {
				t.Errorf("the monitor does not give the host up with the reason:\n%s", out)
			}
			console := issueLines(t, filepath.Join(dir, sandbox.AddNodesDir, "2"), "extra-worker-2")
			if !strings.Contains(console, why) {
				t.Errorf("the host's console does not say why:\n%s", console)
			}
		})

		t.Run("expired token", func(t *testing.T) {
			out, err := addNodes("--workers", "1", "--token-ttl", "-1h", "--timeout", "2m")
			if err == nil {
				t.Fatalf("add-nodes succeeded:\n%s", out)
			}
			if !strings.Contains(out, "the provided authentication token has expired") {
				t.Errorf("the monitor does not say the token expired:\n%s", out)
			}
			ad := filepath.Join(dir, sandbox.AddNodesDir, "3")
			console := issueLines(t, ad, "extra-worker-3")
			if !strings.Contains(console, `The authentication token has expired. Please generate a new ISO using the "oc adm node-image create" command, then reboot the node.`) {
				t.Errorf("no 65_token line on the host's console:\n%s", console)
			}
			if got := hostStatuses(t, ad, "extra-worker-3"); len(got) != 0 {
				t.Errorf("the host registered (%v): an expired image must import and install nothing", got)
			}
			if _, err := os.Stat(filepath.Join(ad, "hosts", "extra-worker-3", "root", onhost.BootDiskPath)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the host wrote a disk: %v", err)
			}
		})

		t.Run("killed while writing", func(t *testing.T) {
			killedAt := make(chan string, 1)
			var added *sandbox.Host
			var out strings.Builder
			err := sandbox.AddNodes(context.Background(), sandbox.AddNodesOptions{
				Dir: dir, Workers: 1, Bin: bin, Approve: true, Timeout: 4 * time.Minute, CheckInterval: 2 * time.Second,
				LogLevel: "info", Stdout: &out,
				Started: func(hosts []*sandbox.Host) {
					added = hosts[0]
					go func() { killedAt <- killWhileWriting(hosts[0], dir) }()
				},
			})
			if err != nil {
				t.Fatalf("add-nodes: %v\n%s", err, out.String())
			}
			killed := <-killedAt
			if killed == "" {
				t.Fatalf("the host was never seen writing its disk:\n%s", out.String())
			}
			if boots, crashes := added.Counts(); crashes != 1 || boots < 3 {
				t.Errorf("the added host: %d boots, %d crashes; want the kill restarted (1 crash) and the installed disk booted (3 boots or more)", boots, crashes)
			}
			ad := filepath.Join(dir, sandbox.AddNodesDir, "4")
			if got := hostStatuses(t, ad, "extra-worker-4"); !slices.Equal(got, []string{string(wire.HostStatusAddedToExistingCluster)}) {
				t.Errorf("after the kill its node zero's store has %v, want one host added-to-existing-cluster", got)
			}
			c := kubeClient(t, kc)
			checkAddedNodes(t, c, []string{"extra-worker-4"})
			t.Logf("killed at %s", killed)
		})
	}, "--masters", "3", "--workers", "0", "--kube-api", "yes", "--check-interval", "2s")
	if err != nil {
		t.Fatalf("sandbox: %v\n%s", err, out)
	}
}

// killWhileWriting waits for the added host to write its disk (its own
// node zero says so) and kills its daemon with SIGKILL; it returns the
// progress it was killed at, "" when it never saw it writing.
func killWhileWriting(h *sandbox.Host, dir string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var c *wire.Client
	for ctx.Err() == nil {
		if c == nil {
			ad := filepath.Join(dir, sandbox.AddNodesDir, "4")
			if st, err := addnodes.LoadState(ad); err == nil {
				c, _ = wire.NewClient("http://"+h.Addr.String()+":8090", wire.WithUserToken(st.UserToken()))
			}
		}
		if c != nil {
			if ies, err := c.ListInfraEnvs(ctx, ""); err == nil && len(ies) > 0 {
				if hs, err := c.ListHosts(ctx, ies[0].ID); err == nil && len(hs) == 1 && hs[0].Progress != nil && hs[0].Progress.CurrentStage == wire.HostStageWritingImageToDisk {
					at := string(hs[0].Progress.CurrentStage)
					if h.Kill() {
						return at
					}
				}
			}
		}
		backoff.Sleep(ctx, 20*time.Millisecond)
	}
	return ""
}

// hostStatuses lists the hosts an added host's own node zero keeps in its
// store, by status.
func hostStatuses(t *testing.T, ad, name string) []string {
	t.Helper()
	db := filepath.Join(ad, "hosts", name, "root", onhost.DataDir, "nodezero.db")
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	st, err := store.Open(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []string
	err = st.View(context.Background(), func(tx *store.Tx) error {
		hs, err := tx.Hosts(store.HostFilter{})
		for _, h := range hs {
			out = append(out, h.Status)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// issueLines is an added host's console: its /etc/issue.d files.
func issueLines(t *testing.T, ad, name string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(ad, "hosts", name, "root", "etc", "issue.d", "*.issue"))
	var b strings.Builder
	for _, f := range files {
		c, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(c)
	}
	return b.String()
}

func kubeClient(t *testing.T, kc string) *kube.Client {
	t.Helper()
	cfg, err := kube.LoadKubeconfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// checkAddedNodes: each name is one Ready worker Node, and each has its
// client and serving CSRs, approved, and no other.
func checkAddedNodes(t *testing.T, c *kube.Client, names []string) {
	t.Helper()
	ctx := context.Background()
	csrs, err := c.ListCSRs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		node, err := c.GetNode(ctx, n)
		if err != nil {
			t.Errorf("Node %s: %v", n, err)
			continue
		}
		if !kube.NodeReady(node) {
			t.Errorf("Node %s is not Ready: %+v", n, node.Status.Conditions)
		}
		if _, ok := node.Metadata.Labels["node-role.kubernetes.io/worker"]; !ok {
			t.Errorf("Node %s has no worker label: %v", n, node.Metadata.Labels)
		}
		var mine []string
		for i := range csrs {
			req, err := csrs[i].ParseRequest()
			if err != nil || req.Subject.CommonName != "system:node:"+n {
				continue
			}
			mine = append(mine, csrs[i].Spec.SignerName)
			if !kube.CSRApproved(&csrs[i]) {
				t.Errorf("CSR %s of %s is not approved", csrs[i].Metadata.Name, n)
			}
		}
		slices.Sort(mine)
		if want := []string{"kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving"}; !slices.Equal(mine, want) {
			t.Errorf("%s's CSRs: got %v, want one of each %v", n, mine, want)
		}
	}
}

// hostsFlag is the --hosts value add-nodes printed in its wait-for line.
func hostsFlag(t *testing.T, out string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "--hosts ")
	if !ok {
		t.Fatalf("add-nodes printed no wait-for line:\n%s", out)
	}
	hosts, _, _ := strings.Cut(rest, " ")
	return hosts
}
