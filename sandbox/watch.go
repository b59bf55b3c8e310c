package sandbox

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nodezero/nodezero/tui"
	"github.com/nodezero/nodezero/wire"
)

// What the sandbox says while the install runs, and what it leaves.

// Summary is what a sandbox run leaves in DIR/summary.json.
type Summary struct {
	ClusterID      string             `json:"cluster_id"`
	Status         wire.ClusterStatus `json:"status"`
	StatusInfo     string             `json:"status_info"`
	WallSeconds    float64            `json:"wall_seconds"`
	WritingSeconds float64            `json:"writing_seconds"` // time with at least one disk being written
	Hosts          []HostSummary      `json:"hosts"`
	URL            string             `json:"url"`
	// UserTokenFile keeps node zero's user token (summary.json never
	// holds a token).
	UserTokenFile string `json:"user_token_file"`
	// KubeAPI is the installed cluster's Kubernetes API, Kubeconfig the
	// admin kubeconfig that opens it (empty when the step was skipped).
	KubeAPI    string `json:"kube_api,omitempty"`
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// NextSteps is the block printed at the end.
	NextSteps NextSteps `json:"next_steps"`
}

// HostSummary is one host of a Summary.
type HostSummary struct {
	Name       string          `json:"name"`
	HostID     string          `json:"host_id"`
	Role       wire.HostRole   `json:"role"`
	Bootstrap  bool            `json:"bootstrap"`
	Status     wire.HostStatus `json:"status"`
	StatusInfo string          `json:"status_info"`
	Boots      int             `json:"boots"`
	Root       string          `json:"root"`
	Disks      string          `json:"disks"`
	Log        string          `json:"log"`
	// Namespace is the host's network namespace (with --netns).
	Namespace string `json:"namespace,omitempty"`
}

// watch follows the install through node zero's API, printing what
// changes, until the cluster is installed, fails (or r.checks says why it
// cannot go on), or the time is up. Each cluster read reboots the hosts a
// reset left waiting (rebootResetHosts). While the dashboard is on screen
// a failed cluster does not end the watch: the person may reset it there.
func (r *run) watch(ctx context.Context, c *wire.Client) (Summary, error) {
	timeout := r.o.Timeout
	deadline := time.Now().Add(timeout)
	var sum Summary
	seen := map[string]string{}
	var errorSince time.Time
	for {
		if ctx.Err() != nil {
			return sum, ctx.Err()
		}
		if time.Now().After(deadline) {
			return sum, fmt.Errorf("sandbox: the cluster is not installed after %s: %s (%s)", timeout, sum.Status, sum.StatusInfo)
		}
		for _, h := range r.hosts {
			h.mu.Lock()
			exit := h.exit
			h.mu.Unlock()
			if exit != nil {
				return sum, fmt.Errorf("sandbox: host %s stopped: %v (log %s)", h.Name, exit, h.log)
			}
		}
		if err := r.checks(); err != nil {
			return sum, err
		}
		if cl, err := c.ListClusters(ctx); err == nil && len(cl) > 0 {
			cluster, err := c.GetCluster(ctx, cl[0].ID)
			if err == nil {
				r.rebootResetHosts(cluster)
				sum = summarize(cluster)
				line := fmt.Sprintf("cluster %s: %s", cluster.Status, cluster.StatusInfo)
				if cluster.Progress != nil && cluster.Progress.TotalPercentage > 0 {
					line += fmt.Sprintf(" (%d%%)", cluster.Progress.TotalPercentage)
				}
				if seen["cluster"] != line {
					seen["cluster"] = line
					r.say("%s", line)
				}
				for _, h := range cluster.Hosts {
					// The hostname once the inventory has one; the stage
					// apart from its info ("Rebooting: rebooting in 1ms").
					l := fmt.Sprintf("%s: %s", tui.HostName(h), h.Status)
					if p := tui.ProgressText(h.Progress); p != "" {
						l += " — " + p
					}
					if seen[h.ID] != l {
						seen[h.ID] = l
						r.say("  %s", l)
						if err := r.inspectWriting(ctx, tui.HostName(h), tui.ProgressText(h.Progress)); err != nil {
							return sum, err
						}
					}
				}
				if !retryable(cluster.Status) {
					errorSince = time.Time{} // reset from the dashboard
				}
				switch cluster.Status {
				case wire.ClusterStatusInstalled:
					return sum, nil
				case wire.ClusterStatusError, wire.ClusterStatusCancelled:
					// Hosts still settle (logs, stage reports) for a moment.
					if errorSince.IsZero() {
						errorSince = time.Now()
					} else if time.Since(errorSince) > 3*time.Second && !r.consoleUp.Load() {
						return sum, fmt.Errorf("sandbox: the installation failed: %s: %s%s", cluster.Status, cluster.StatusInfo, hostReasons(cluster))
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return sum, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func summarize(c *wire.Cluster) Summary {
	s := Summary{ClusterID: c.ID, Status: c.Status, StatusInfo: c.StatusInfo}
	for _, h := range c.Hosts {
		s.Hosts = append(s.Hosts, HostSummary{Name: h.RequestedHostname, HostID: h.ID, Role: h.Role, Bootstrap: h.Bootstrap, Status: h.Status, StatusInfo: h.StatusInfo})
	}
	sort.Slice(s.Hosts, func(i, j int) bool { return s.Hosts[i].Name < s.Hosts[j].Name })
	return s
}

func hostReasons(c *wire.Cluster) string {
	var b strings.Builder
	for _, h := range c.Hosts {
		if h.Status == wire.HostStatusError || h.Status == wire.HostStatusCancelled {
			fmt.Fprintf(&b, "\n  %s: %s: %s", h.RequestedHostname, h.Status, h.StatusInfo)
		}
	}
	return b.String()
}

// writingSeconds is how long at least one disk was being written: the union
// of each host's "Writing image to disk" stage, from the progress events.
func writingSeconds(ctx context.Context, c *wire.Client, clusterID string) float64 {
	evs, err := c.ListEvents(ctx, wire.EventsQuery{ClusterID: clusterID})
	if err != nil {
		return 0
	}
	type span struct{ from, to time.Time }
	open := map[string]time.Time{}
	var spans []span
	for _, e := range evs {
		if e.Name != "host_install_progress_updated" || e.HostID == nil {
			continue
		}
		id, at := *e.HostID, e.EventTime.Time()
		if from, ok := open[id]; ok {
			spans = append(spans, span{from, at})
			delete(open, id)
		}
		if strings.Contains(e.Message, string(wire.HostStageWritingImageToDisk)) {
			open[id] = at
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from.Compare(b.from) })
	var total time.Duration
	var cur span
	for _, s := range spans {
		switch {
		case cur.to.IsZero():
			cur = s
		case s.from.After(cur.to):
			total += cur.to.Sub(cur.from)
			cur = s
		case s.to.After(cur.to):
			cur.to = s.to
		}
	}
	if !cur.to.IsZero() {
		total += cur.to.Sub(cur.from)
	}
	return total.Seconds()
}
