package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nodezero/nodezero/configimage/addnodes"
	"github.com/nodezero/nodezero/internal/hwtree"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/watch"
	"github.com/nodezero/nodezero/wire"
)

// Day 2 in the sandbox (`nodezero sandbox add-nodes`): against a sandbox
// whose cluster is installed and still running (--keep-running), it does
// what a person adding workers to an OpenShift cluster does with
// `oc adm node-image create` and `oc adm node-image monitor`: it writes a
// nodes-config.yaml for N new hosts, makes the node config image from it
// and the installed cluster's API (configimage/addnodes, kube's
// node-joiner reads), boots the hosts from it (each its own node zero,
// installing itself as a day-2 host), and follows them until their Nodes
// are Ready in the cluster's API, approving their CSRs as the person would.

// AddNodesOptions is one `nodezero sandbox add-nodes` run.
type AddNodesOptions struct {
	// Dir is the sandbox's directory: its cluster installed, its hosts
	// and kube API running (nodezero sandbox --keep-running).
	Dir     string
	Workers int
	// Bin is the nodezero binary the hosts run (required).
	Bin string
	// NoDiskHint names an added host whose root device hints match no
	// disk (a fault for tests: it stays insufficient).
	NoDiskHint string
	// TokenTTL is how long the node config image's tokens last (0: 48 h;
	// negative: the image was made that long ago and its tokens have
	// expired, a fault for tests).
	TokenTTL time.Duration
	// Approve approves the added hosts' CSRs as the monitor sees them.
	Approve       bool
	Timeout       time.Duration
	CheckInterval time.Duration
	LogLevel      string
	// KeepRunning leaves the added hosts running until ctx ends.
	KeepRunning bool
	// Started, when set, is called once the added hosts have started
	// (tests kill their processes through it).
	Started func(hosts []*Host)
	Stdout  io.Writer
}

// AddNodesDir is where add-nodes runs keep their inputs, node config
// images and hosts, under the sandbox's directory: one directory a run
// (1, 2...), its hosts numbered on from the earlier runs'.
const AddNodesDir = "add-nodes"

// nextAddNodesRun makes the next run's directory and says how many hosts
// the earlier runs added.
func nextAddNodesRun(dir string) (string, int, error) {
	base := filepath.Join(dir, AddNodesDir)
	hosts := 0
	for k := 1; ; k++ {
		ad := filepath.Join(base, strconv.Itoa(k))
		if !exists(ad) {
			if err := os.MkdirAll(ad, 0o755); err != nil {
				return "", 0, err
			}
			return ad, hosts, nil
		}
		ents, err := os.ReadDir(filepath.Join(ad, "hosts"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", 0, err
		}
		hosts += len(ents)
	}
}

// AddNodes adds o.Workers hosts to the sandbox's installed cluster.
func AddNodes(ctx context.Context, o AddNodesOptions) error {
	if o.Workers < 1 {
		return fmt.Errorf("sandbox add-nodes: --workers %d: want 1 or more", o.Workers)
	}
	start := time.Now()
	// The hosts' supervisors and the monitor write at once: one lock.
	o.Stdout = &switchWriter{w: o.Stdout}
	say := func(format string, a ...any) {
		fmt.Fprintf(o.Stdout, "%s %s\n", time.Since(start).Round(100*time.Millisecond), fmt.Sprintf(format, a...))
	}
	st, err := readState(o.Dir)
	if err != nil {
		return fmt.Errorf("sandbox add-nodes: %s holds no sandbox (%w): install one first with nodezero sandbox --dir %s --keep-running", o.Dir, err, o.Dir)
	}
	if st.Status != wire.ClusterStatusInstalled {
		return fmt.Errorf("sandbox add-nodes: the cluster in %s is %s: nodes are added to an installed cluster (nodezero sandbox --dir %s --keep-running)", o.Dir, orNone(string(st.Status)), o.Dir)
	}
	prefix, err := netip.ParsePrefix(st.Prefix)
	if err != nil {
		return fmt.Errorf("sandbox add-nodes: %s: prefix: %w", StateFile, err)
	}
	ad, first, err := nextAddNodesRun(o.Dir)
	if err != nil {
		return err
	}
	started := false
	defer func() {
		// A run that fails before its hosts start leaves nothing: the
		// next run takes its number and its host names.
		if !started {
			os.RemoveAll(ad)
		}
	}()
	kcPath := filepath.Join(o.Dir, "install", "auth", "kubeconfig")
	kc, err := kube.LoadKubeconfig(kcPath)
	if err != nil {
		return fmt.Errorf("sandbox add-nodes: %w", err)
	}
	kc2, err := kube.NewClient(kc, kube.WithTimeout(10*time.Second))
	if err != nil {
		return fmt.Errorf("sandbox add-nodes: %w", err)
	}
	defer kc2.Close()
	if err := kc2.Ready(ctx); err != nil {
		return fmt.Errorf("sandbox add-nodes: the cluster's Kubernetes API (%s) does not answer: %w; is the sandbox still running (nodezero sandbox --dir %s --keep-running)?", kc2.Server(), err, o.Dir)
	}
	info, err := kube.ReadClusterInfo(ctx, kc2, "")
	if err != nil {
		return fmt.Errorf("sandbox add-nodes: %w", err)
	}
	say("cluster %s (%s, %s) at %s", info.ClusterName, info.ClusterID, info.Version, kc2.Server())

	hosts, err := makeAddedHosts(ad, st, prefix, first, o.Workers)
	if err != nil {
		return err
	}
	if err := writeNodesConfig(ad, hosts, o.NoDiskHint); err != nil {
		return err
	}
	now, ttl := time.Now(), o.TokenTTL
	if ttl < 0 {
		// An image made earlier, whose tokens have expired by now.
		now, ttl = now.Add(ttl-time.Minute), time.Minute
	}
	res, err := addnodes.Create(ctx, addnodes.Options{Dir: ad, Cluster: *info, Now: now, TokenTTL: ttl})
	if err != nil {
		return fmt.Errorf("sandbox add-nodes: %w", err)
	}
	say("node config image %s", res.Path)

	env := hostsEnv(st.Disks)
	for _, h := range hosts {
		// Each is its own node zero: its API on its own address.
		h.args = hostArgs(h, hostRun{ISO: res.Path, Listen: h.Addr, Prefix: prefix, DNS: st.DNS, NTP: st.NTP,
			Payload: filepath.Join(o.Dir, "payload"), CheckInterval: o.CheckInterval, LogLevel: o.LogLevel})
		h.env = env
	}
	ctx, stop := context.WithTimeout(ctx, o.Timeout)
	var wg sync.WaitGroup
	defer func() {
		stop()
		wg.Wait()
	}()
	started = true
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			supervise(ctx, o.Bin, h, say)
		}()
	}
	var names, pairs []string
	var watched []watch.AddNodesHost
	for _, h := range hosts {
		names = append(names, h.Name+" at "+h.Addr.String())
		pairs = append(pairs, h.Name+"="+h.Addr.String())
		watched = append(watched, watch.AddNodesHost{Name: h.Name, URL: "http://" + h.Addr.String() + ":8090"})
	}
	say("started %s, each its own node zero: %s", count(len(hosts), "host"), strings.Join(names, ", "))
	say("each host's dashboard: nodezero console --url http://<its address>:8090 (user token: %s's)", filepath.Join(ad, addnodes.StateFile))
	say("following them as: nodezero wait-for add-nodes --dir %s --hosts %s --kubeconfig %s%s", ad, strings.Join(pairs, ","), kcPath, map[bool]string{true: " --approve"}[o.Approve])
	if o.Started != nil {
		o.Started(hosts)
	}
	werr := watch.AddNodes(ctx, watch.AddNodesOptions{Hosts: watched, UserToken: res.State.UserToken(), Kube: kc2, Approve: o.Approve, Out: o.Stdout, Poll: time.Second})
	for _, h := range hosts {
		boots, crashes := h.Counts()
		fmt.Fprintf(o.Stdout, "  %-16s %-15s boots %d, killed %d, log %s\n", h.Name, h.Addr, boots, crashes, h.log)
	}
	if werr != nil {
		return fmt.Errorf("sandbox add-nodes: %w", werr)
	}
	say("%s added to cluster %s", count(len(hosts), "host"), info.ClusterName)
	if o.KeepRunning {
		fmt.Fprintln(o.Stdout, "added hosts keep running; interrupt to stop them")
		<-ctx.Done()
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "not installed"
	}
	return s
}

// makeAddedHosts makes the trees, roots and addresses of n extra workers,
// on the sandbox's /24 after its own hosts (.40 on), numbered from first.
func makeAddedHosts(ad string, st *State, prefix netip.Prefix, first, n int) ([]*Host, error) {
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("%s%d", hwtree.ExtraWorkerPrefix, first+i))
	}
	hw := filepath.Join(ad, "hw")
	if err := hwtree.Write(hw, names...); err != nil {
		return nil, fmt.Errorf("sandbox add-nodes: %w", err)
	}
	var hosts []*Host
	for i, name := range names {
		h := &Host{Name: name, Role: "worker", hw: filepath.Join(hw, name)}
		var err error
		if h.NIC, h.MAC, err = firstNIC(h.hw); err != nil {
			return nil, err
		}
		a := prefix.Addr().As4()
		a[3] = byte(40 + first + i)
		h.Addr = netip.AddrFrom4(a)
		hd := filepath.Join(ad, "hosts", name)
		h.root, h.disks, h.log = filepath.Join(hd, "root"), filepath.Join(st.Disks, name), filepath.Join(hd, "run.log")
		if err := os.MkdirAll(h.root, 0o755); err != nil {
			return nil, err
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// writeNodesConfig writes AD/nodes-config.yaml as a person writes it for
// `oc adm node-image create`: each host's name, NIC and root device hint
// (the tree's one disk, or, for noDisk, a disk the host does not have).
func writeNodesConfig(ad string, hosts []*Host, noDisk string) error {
	var b strings.Builder
	b.WriteString("hosts:\n")
	for _, h := range hosts {
		dev := "/dev/vda"
		if h.Name == noDisk {
			dev = "/dev/sdz"
		}
		fmt.Fprintf(&b, "- hostname: %s\n  role: worker\n  interfaces:\n  - name: %s\n    macAddress: %s\n  rootDeviceHints:\n    deviceName: %s\n", h.Name, h.NIC, h.MAC, dev)
	}
	if noDisk != "" && !strings.Contains(b.String(), "- hostname: "+noDisk+"\n") {
		return errors.New("sandbox add-nodes: --fault-no-disk names no added host")
	}
	return os.WriteFile(filepath.Join(ad, "nodes-config.yaml"), []byte(b.String()), 0o644)
}
