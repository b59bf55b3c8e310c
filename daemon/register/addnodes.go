package register

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// The add-nodes workflow's steps, named as ABI's units that do them
// (docs/reference/abi-on-host.md §1.4, §3.7): AddNodeStatus.Step says which
// one the status is about.
const (
	StepImportCluster    = "agent-import-cluster"
	StepRegisterInfraEnv = "agent-register-infraenv"
	StepApplyHostConfig  = "apply-host-config"
	StepAddNode          = "agent-add-node"
)

// MsgWaitingForHost is add-node.sh's 90_add-node line while the host is
// not known.
const MsgWaitingForHost = "Waiting for the host to be ready"

// AddNodeConfig is what AddNode needs on a host booted from a node config
// image: its own node zero, on this host.
type AddNodeConfig struct {
	Client *wire.Client // the user token's client of this host's own service
	// Set holds the day-2 manifests (manifests.LoadAddNodes): the
	// infra-env, its pull secret and NMStateConfigs.
	Set *manifests.Set
	Env onhost.AddNodesEnv // add-nodes.env
	// ClusterConfigDir is /etc/assisted/clusterconfig under the root:
	// import-cluster-config.json and, when the cluster has one,
	// worker-ignition-endpoint.json.
	ClusterConfigDir string
	HostConfigDir    string   // /etc/assisted/hostconfig; "" = none
	FailuresFile     string   // host-config-failures; "" = not written
	LocalMACs        []string // this host's NICs: its host config and its host are found by them
	// Interval between looks at the host (add-node.sh: 10 s; 0: 2 s,
	// the service answers a look for next to nothing).
	Interval time.Duration
	Status   func(AddNodeStatus) // nil = none
	Logger   *slog.Logger
}

// AddNodeStatus is one turn of AddNode, for the console and systemd.
type AddNodeStatus struct {
	Step string // the ABI unit whose work this is (StepImportCluster…)
	Line string // the one-line status
	// Err is set while the step fails and is retried (Line says what is
	// tried), or when the install could not be started.
	Err error
	// Reasons say why the host is not ready yet: the messages of its
	// failing validations (a root device hint that matches no disk, too
	// little memory…).
	Reasons []string
	// Installing: the service accepted the host's install (now or
	// before a restart); Failed: the install failed; Added: the host
	// reached added-to-existing-cluster.
	Installing, Failed, Added bool
}

// AddNode does on a host booted from a node config image what ABI's
// agent-import-cluster, agent-register-infraenv, apply-host-config and
// agent-add-node units do one after another: import the installed
// cluster (ImportCluster), register the infra-env from the manifests bound
// to it, apply this host's own host config as its inventory comes in,
// wait for the host to be known and install it (POST
// .../hosts/{id}/actions/install) once. Every step reads the service
// first, so a restart at any point resumes without a second import or a
// second install. It follows the install until the host is added or
// fails, saying what it does through Status at every turn, and returns
// the host's id then, or the context's error. The import and the
// infra-env are retried while the service cannot be reached or fails;
// what retrying cannot fix ends the flow at once: manifests or
// clusterconfig files that do not parse (ErrManifests), a service
// holding another cluster (ErrMultiple), a request the service refused
// with a 4xx.
func AddNode(ctx context.Context, cfg AddNodeConfig) (string, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	say := func(st AddNodeStatus) {
		if cfg.Status != nil {
			cfg.Status(st)
		}
	}
	if cfg.Set == nil || cfg.Set.InfraEnv == nil || cfg.Set.PullSecret.PullSecret() == "" {
		return "", fmt.Errorf("%w: the node config image holds no infraenv.yaml or pull secret", ErrManifests)
	}
	var cluster *wire.Cluster
	var infraEnv *wire.InfraEnv
	for first := true; ; first = false {
		step, line, err := StepImportCluster, "Importing cluster "+cfg.Env.ClusterName, error(nil)
		if cluster == nil {
			if first {
				say(AddNodeStatus{Step: step, Line: line})
			}
			cluster, err = ImportCluster(ctx, cfg.Client, cfg.Env, cfg.ClusterConfigDir)
			if err == nil {
				cfg.Logger.Info("cluster imported", "cluster", cluster.ID, "openshift_cluster_id", cfg.Env.ClusterID)
			}
		}
		if err == nil && infraEnv == nil {
			step, line = StepRegisterInfraEnv, "Registering the infra-env of cluster "+cfg.Env.ClusterName
			infraEnv, err = registerInfraEnv(ctx, cfg.Client, func() (*wire.InfraEnvCreateParams, error) {
				return infraEnvParams(cfg.Set, cluster.ID)
			})
			if err == nil && infraEnv.ClusterID != cluster.ID {
				err = fmt.Errorf("register infra-env: infra-env %s is not bound to the imported cluster %s: %w", infraEnv.ID, cluster.ID, ErrMultiple)
			}
		}
		if err == nil {
			break
		}
		if code := wire.StatusCode(err); errors.Is(err, ErrMultiple) || errors.Is(err, ErrManifests) || (code >= 400 && code < 500) || ctx.Err() != nil {
			// Retrying cannot fix these: what the node config image holds
			// was refused (a 4xx), or the service is not this host's.
			return "", err
		}
		cfg.Logger.Warn("add-nodes registration failed; retrying", "step", step, "err", err)
		say(AddNodeStatus{Step: step, Line: line, Err: err})
		if !backoff.Sleep(ctx, cfg.Interval) {
			return "", ctx.Err()
		}
	}

	posted := false
	for {
		if cfg.HostConfigDir != "" {
			res, err := ApplyLocalHostConfigs(ctx, cfg.Client, infraEnv.ID, cfg.HostConfigDir, cfg.LocalMACs)
			if err != nil {
				cfg.Logger.Warn("applying the host config", "err", err)
			}
			if cfg.FailuresFile != "" {
				if err := WriteFailures(cfg.FailuresFile, res); err != nil {
					cfg.Logger.Warn("writing host config failures", "err", err)
				}
			}
		}
		hosts, err := cfg.Client.ListHosts(ctx, infraEnv.ID)
		if err != nil {
			say(AddNodeStatus{Step: StepAddNode, Line: "Waiting for the service: " + err.Error(), Err: err})
		} else {
			h := ThisHost(hosts, cfg.LocalMACs)
			st := addNodeStatus(h)
			if h != nil && h.Status == wire.HostStatusKnown && !posted {
				// The host was not installing when this look began: a
				// restart after the install started finds it installing
				// and never posts it again.
				_, err := cfg.Client.InstallHost(ctx, infraEnv.ID, h.ID)
				switch {
				case err == nil:
					posted = true
					cfg.Logger.Info("host installation started", "host", h.ID)
					st = AddNodeStatus{Step: StepAddNode, Line: "Host installation in progress", Installing: true}
				case wire.IsStatus(err, 409):
					// The host left known in between: look again.
					cfg.Logger.Info("install refused, host no longer known", "host", h.ID, "err", err)
				default:
					st = AddNodeStatus{Step: StepAddNode, Line: "Starting the host installation failed: " + err.Error(), Err: err}
				}
			}
			say(st)
			if st.Added || st.Failed {
				return h.ID, nil
			}
		}
		if !backoff.Sleep(ctx, cfg.Interval) {
			return "", ctx.Err()
		}
	}
}

// addNodeStatus is the status line for this host as the service has it.
func addNodeStatus(h *wire.Host) AddNodeStatus {
	st := AddNodeStatus{Step: StepAddNode, Line: MsgWaitingForHost}
	if h == nil {
		return st
	}
	switch h.Status {
	case wire.HostStatusKnown, wire.HostStatusDiscovering, wire.HostStatusDisconnected:
	case wire.HostStatusInsufficient, wire.HostStatusPendingForInput:
		st.Reasons = failingMessages(h.ValidationsInfo)
	case wire.HostStatusAddedToExistingCluster, wire.HostStatusInstalled:
		st.Line, st.Added = "The host was added to the cluster", true
		if h.StatusInfo != "" {
			st.Line += ": " + h.StatusInfo
		}
	case wire.HostStatusError, wire.HostStatusCancelled:
		st.Line, st.Failed = "Host installation failed: "+string(h.Status), true
		if h.StatusInfo != "" {
			st.Line += ": " + h.StatusInfo
		}
	default: // preparing, installing, installing-in-progress, pending user action
		st.Line, st.Installing = "Host installation in progress", true
		if h.Progress != nil && h.Progress.CurrentStage != "" {
			st.Line += ": " + string(h.Progress.CurrentStage)
		}
	}
	return st
}

// failingMessages are the messages of the validations that keep a host
// from known, in validations_info's order (an advisory one is not why).
func failingMessages(info string) []string {
	vi, _ := wire.ParseValidationsInfo(info) // unreadable text says nothing
	var out []string
	for _, v := range vi.Failing() {
		if !machine.Advisory(wire.HostValidationID(v.ID)) && v.Message != "" {
			out = append(out, v.Message)
		}
	}
	return out
}

// ThisHost finds this host among the infra-env's: the one whose inventory
// has one of macs, else the only host (add-node.sh takes the infra-env's
// host: on a host booted from a node config image its own agent is the
// only one that registers). nil when there is none yet.
func ThisHost(hosts []*wire.Host, macs []string) *wire.Host {
	local := map[string]bool{}
	for _, m := range macs {
		local[strings.ToLower(m)] = true
	}
	var live []*wire.Host
	for _, h := range hosts {
		if h == nil {
			continue
		}
		live = append(live, h)
		var inv struct {
			Interfaces []struct {
				MACAddress string `json:"mac_address"`
			} `json:"interfaces"`
		}
		if h.Inventory == "" || json.Unmarshal([]byte(h.Inventory), &inv) != nil {
			continue
		}
		for _, itf := range inv.Interfaces {
			if local[strings.ToLower(itf.MACAddress)] {
				return h
			}
		}
	}
	if len(live) == 1 {
		return live[0]
	}
	return nil
}

// ImportCluster returns the service's day-2 cluster for the installed
// cluster env names, importing it when there is none yet
// (agent-installer-client importCluster: POST /v2/clusters/import with
// CLUSTER_ID as openshift_cluster_id, CLUSTER_NAME and
// CLUSTER_API_VIP_DNS_NAME), then sets on it what clusterconfig/ holds:
// import-cluster-config.json's userManagedNetworking and
// worker-ignition-endpoint.json as its ignition_endpoint, with one PATCH,
// sent only when the cluster differs. A second call, or a call after a
// restart, finds the AddHostsCluster with that openshift_cluster_id and
// never imports again; a service holding any other cluster is
// ErrMultiple.
func ImportCluster(ctx context.Context, c *wire.Client, env onhost.AddNodesEnv, clusterConfigDir string) (*wire.Cluster, error) {
	update, err := ClusterConfigUpdate(clusterConfigDir)
	if err != nil {
		return nil, err
	}
	list, err := c.ListClusters(ctx)
	if err != nil {
		return nil, err
	}
	var cl *wire.Cluster
	for _, x := range list {
		if x == nil {
			continue
		}
		if x.Kind != wire.ClusterKindAddHostsCluster || x.OpenshiftClusterID != env.ClusterID || cl != nil {
			return nil, fmt.Errorf("import cluster: the service holds cluster %s (%s, openshift_cluster_id %q), not only the imported cluster %s: %w",
				x.ID, x.Kind, x.OpenshiftClusterID, env.ClusterID, ErrMultiple)
		}
		cl = x
	}
	if cl == nil {
		p := ImportParams(env)
		if cl, err = c.ImportCluster(ctx, p); err != nil {
			return nil, err
		}
	}
	if !needsUpdate(cl, update) {
		return cl, nil
	}
	return c.UpdateCluster(ctx, cl.ID, update)
}

// ImportParams is the import request for add-nodes.env.
func ImportParams(env onhost.AddNodesEnv) wire.ImportClusterParams {
	id, name, dns := env.ClusterID, env.ClusterName, env.APIVIPDNSName
	return wire.ImportClusterParams{Name: &name, APIVipDnsname: &dns, OpenshiftClusterID: &id}
}

// ClusterConfigUpdate reads clusterconfig/ into the update the import
// sends after it: import-cluster-config.json is required,
// worker-ignition-endpoint.json optional (a cluster whose worker user data
// names no endpoint). A file that does not parse is an ErrManifests error
// naming it.
func ClusterConfigUpdate(dir string) (wire.V2ClusterUpdateParams, error) {
	var p wire.V2ClusterUpdateParams
	path := filepath.Join(dir, onhost.ImportClusterConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("%w: %v", ErrManifests, err)
	}
	var icc onhost.ImportClusterConfig
	if err := onhost.ParseJSONFile(path, b, &icc); err != nil {
		return p, fmt.Errorf("%w: %v", ErrManifests, err)
	}
	p.UserManagedNetworking = icc.Networking.UserManagedNetworking
	path = filepath.Join(dir, onhost.WorkerIgnitionEndpointFile)
	b, err = os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, nil
	case err != nil:
		return p, fmt.Errorf("%w: %v", ErrManifests, err)
	}
	var ep onhost.WorkerIgnitionEndpoint
	if err := onhost.ParseJSONFile(path, b, &ep); err != nil {
		return p, fmt.Errorf("%w: %v", ErrManifests, err)
	}
	if ep.URL == "" {
		return p, fmt.Errorf("%w: %s: url is empty", ErrManifests, path)
	}
	p.IgnitionEndpoint = &wire.IgnitionEndpoint{URL: &ep.URL}
	if ep.CACertificate != "" {
		p.IgnitionEndpoint.CACertificate = &ep.CACertificate
	}
	return p, nil
}

// needsUpdate reports whether cl lacks anything of p.
func needsUpdate(cl *wire.Cluster, p wire.V2ClusterUpdateParams) bool {
	if u := p.UserManagedNetworking; u != nil && (cl.UserManagedNetworking == nil || *cl.UserManagedNetworking != *u) {
		return true
	}
	if e := p.IgnitionEndpoint; e != nil {
		have := cl.IgnitionEndpoint
		if have == nil || strOf(have.URL) != strOf(e.URL) || strOf(have.CACertificate) != strOf(e.CACertificate) {
			return true
		}
	}
	return false
}

func strOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
