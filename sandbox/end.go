package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/wire"
)

// finish completes the summary, writes summary.json (never over an
// earlier one with a run that saw no cluster), removes or keeps the disks
// and, once the dashboard is left, prints the end: the cluster, the hosts,
// the space used and the next steps.
func (r *run) finish(ctx context.Context, c *wire.Client, url string, sum Summary, werr error, consoleDone <-chan error) error {
	o := r.o
	tokenFile := filepath.Join(r.installDir, o.ConfigImage.StateFile)
	sum.URL, sum.UserTokenFile = url, tokenFile
	if sum.KubeAPI = r.kube.url(); sum.KubeAPI != "" {
		sum.Kubeconfig = r.kube.kubeconfig
	}
	sum.WallSeconds = time.Since(r.start).Seconds()
	if sum.ClusterID != "" {
		sum.WritingSeconds = writingSeconds(ctx, c, sum.ClusterID)
	}
	for i := range sum.Hosts {
		for _, h := range r.hosts {
			if h.Name == sum.Hosts[i].Name {
				h.mu.Lock()
				sum.Hosts[i].Boots, sum.Hosts[i].Root, sum.Hosts[i].Disks, sum.Hosts[i].Log = h.boots, h.root, h.disks, h.log
				sum.Hosts[i].Namespace = h.ns
				h.mu.Unlock()
			}
		}
	}
	sum.NextSteps = nextSteps(o.Dir, r.installDir, tokenFile, url, sum.KubeAPI, o.KeepRunning && werr == nil, true)
	sum.NextSteps.Retry = retryable(sum.Status)
	// The space, before the disks go.
	disksUsed, dirUsed := usage(o.Disks), usage(o.Dir)
	if strings.HasPrefix(o.Disks, o.Dir+string(filepath.Separator)) {
		dirUsed -= disksUsed
	}
	removeDisks := werr == nil && !o.Keep && !o.KeepRunning
	if sum.ClusterID != "" {
		if err := r.saveState(sum.ClusterID, sum.Status); err != nil {
			return err
		}
	}
	if err := writeSummary(o.Dir, sum); err != nil {
		return err
	}
	// The dashboard shows the end of the install until the person leaves
	// it; the summary follows on the terminal.
	if cerr := <-consoleDone; cerr != nil {
		fmt.Fprintf(o.stderr(), "sandbox: console: %v\n", cerr)
	}
	if sum.ClusterID == "" {
		fmt.Fprintf(o.Stdout, "\nno cluster: node zero's API at %s never listed one (node zero's log: %s)\n", url, r.zero.log)
	} else {
		fmt.Fprintf(o.Stdout, "\ncluster %s: %s — %s\n", sum.ClusterID, sum.Status, sum.StatusInfo)
	}
	fmt.Fprintf(o.Stdout, "wall time %.1f s, disks being written %.1f s (%.0f%%)\n", sum.WallSeconds, sum.WritingSeconds, 100*sum.WritingSeconds/max(sum.WallSeconds, 0.001))
	for _, h := range sum.Hosts {
		fmt.Fprintf(o.Stdout, "  %-9s %-7s %-10s log %s\n", h.Name, h.Role, h.Status, h.Log)
	}
	disks := "kept (--keep)"
	switch {
	case removeDisks:
		disks = "removed"
		for _, h := range r.hosts {
			if err := os.RemoveAll(h.disks); err != nil {
				return err
			}
		}
		if o.Disks == tmpfsDisks(o.Dir) || o.Disks == filepath.Join(o.Dir, "disks") {
			if err := os.RemoveAll(o.Disks); err != nil {
				return err
			}
		}
	case o.KeepRunning && werr == nil:
		disks = "kept while the hosts run"
	case werr != nil:
		disks = "kept for a look or --resume"
	}
	fmt.Fprintf(o.Stdout, "space: disks %s in %s (%s), the rest %s in %s\n", mib(disksUsed), o.Disks, disks, mib(dirUsed), o.Dir)
	fmt.Fprintf(o.Stdout, "summary %s\n", filepath.Join(o.Dir, "summary.json"))
	if r.bed != nil && o.KeepRunning {
		cacert := ""
		if o.APITLS {
			cacert = " --cacert " + APICAFile(r.installDir)
		}
		fmt.Fprintf(o.Stdout, "the API answers inside node zero's namespace: ip netns exec %s curl%s %s%s/clusters -H \"Authorization: $(jq -r .tokens.userAuth %s)\"\n",
			r.zero.ns, cacert, url, wire.APIBasePath, tokenFile)
	}
	switch {
	case sum.KubeAPI != "":
		fmt.Fprintf(o.Stdout, "kube API %s (etcd and kube-apiserver logs in %s): kubectl --kubeconfig %s get clusterversion\n", sum.KubeAPI, r.kube.cfg.Dir, sum.Kubeconfig)
	case r.kube == nil:
		fmt.Fprintln(o.Stdout, "kube API: none (skipped)")
	}
	sum.NextSteps.print(o.Stdout)
	return nil
}

// writeSummary writes DIR/summary.json, unless sum saw no cluster and an
// earlier run's summary is there: that one says more.
func writeSummary(dir string, sum Summary) error {
	p := filepath.Join(dir, "summary.json")
	if sum.ClusterID == "" && exists(p) {
		return nil
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	// 0600 as the install directory's auth files: it names them.
	return atomicfile.Write(p, append(b, '\n'), 0o600)
}
