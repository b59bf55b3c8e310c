package addnodes

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/configimage/inputs"
	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/configimage/report"
	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/onhost"
)

// File names in the directory Create works in.
const (
	// ImageName is the node config image, as oc adm node-image create
	// names it.
	ImageName = "node-config.noarch.iso"
	// StateFile keeps the token key, the tokens and the infra-env id
	// (0600), like create config-image's .nodezero_state.json.
	StateFile = ".nodezero_addnodes_state.json"
)

// DefaultTokenTTL is how long the day-2 tokens are valid, as
// oc adm node-image create mints them (docs/reference/abi-on-host.md §13).
const DefaultTokenTTL = 48 * time.Hour

// NodeZeroIP is every added host's NODE_ZERO_IP: each is its own node
// zero (docs/reference/abi-on-host.md §1.1).
var NodeZeroIP = netip.MustParseAddr("127.0.0.1")

// Options are Create's inputs.
type Options struct {
	// Dir holds nodes-config.yaml; the image and the state file are
	// written there.
	Dir string
	// Cluster is what the installed cluster's API says of itself.
	Cluster kube.ClusterInfo
	// Now is when the tokens are minted (their exp is Now+TokenTTL);
	// zero means time.Now(). Tokens already in Dir's state are reused
	// while more than half of TokenTTL is left on them.
	Now time.Time
	// TokenTTL is the tokens' validity; zero means DefaultTokenTTL.
	TokenTTL time.Duration
	// Warnings receives nodes-config.yaml's warnings, one per line; nil
	// discards them.
	Warnings io.Writer
}

// Result is what Create wrote.
type Result struct {
	Path  string   // Dir/node-config.noarch.iso
	Size  int      // its bytes
	Hosts []string // the hosts nodes-config.yaml lists, by hostname (host-N when it has none)
	State *State   // the tokens in the image, as saved in Dir/StateFile
}

// ErrCluster: what the cluster's API said lacks something the image needs.
var ErrCluster = errors.New("the installed cluster does not say what adding nodes needs")

// Create reads Dir/nodes-config.yaml and writes Dir/node-config.noarch.iso
// for the cluster o.Cluster describes, and Dir/StateFile. Every problem of
// nodes-config.yaml is reported at once (errors.Is report.ErrInvalid), as
// is every missing piece of o.Cluster (ErrCluster).
func Create(ctx context.Context, o Options) (*Result, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Now = o.Now.UTC().Truncate(time.Second)
	if o.TokenTTL == 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if o.TokenTTL < time.Second {
		return nil, fmt.Errorf("create node config image: token lifetime %s: want at least a second", o.TokenTTL)
	}
	nc, arch, err := loadNodesConfig(o.Dir, o.Cluster.Architecture, o.Warnings)
	if err != nil {
		return nil, err
	}
	if err := checkCluster(o.Cluster); err != nil {
		return nil, fmt.Errorf("create node config image: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, changed, err := state(o.Dir, o.Now, o.TokenTTL, nil)
	if err != nil {
		return nil, fmt.Errorf("create node config image: %w", err)
	}
	ms, err := Members(nc, o.Cluster, arch, st)
	if err != nil {
		return nil, fmt.Errorf("create node config image: %w", err)
	}
	img, err := configimage.Build(ms, st.IssuedAt.UTC())
	if err != nil {
		return nil, err
	}
	if changed {
		if err := st.save(o.Dir); err != nil {
			return nil, fmt.Errorf("create node config image: %w", err)
		}
	}
	iso := filepath.Join(o.Dir, ImageName)
	// 0600: the image carries the tokens and the pull secret.
	if err := atomicfile.Write(iso, img, 0o600); err != nil {
		return nil, fmt.Errorf("create node config image: %w", err)
	}
	res := &Result{Path: iso, Size: len(img), State: st}
	for i, h := range nc.Hosts {
		res.Hosts = append(res.Hosts, hostName(h, i))
	}
	return res, nil
}

// loadNodesConfig reads and validates dir/nodes-config.yaml, and returns
// it with the added hosts' architecture (clusterArch unless it names one).
func loadNodesConfig(dir, clusterArch string, warnings io.Writer) (*inputs.NodesConfig, string, error) {
	p := filepath.Join(dir, inputs.NodesConfigFile)
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", fmt.Errorf("create node config image: %s not found: it lists the hosts to add (hosts[] with hostname, interfaces[] {name, macAddress}, optional rootDeviceHints and networkConfig; role worker)", p)
	}
	if err != nil {
		return nil, "", fmt.Errorf("create node config image: %w", err)
	}
	nc, rep := inputs.LoadNodesConfig(inputs.NodesConfigFile, data)
	var arch string
	if nc != nil {
		rep.Merge(inputs.ValidateNodesConfig(nc))
		var r report.Report
		arch, r = nc.CheckArchitecture(clusterArch)
		rep.Merge(r)
	}
	if warnings != nil {
		for _, w := range rep.Warnings() {
			fmt.Fprintln(warnings, w.String())
		}
	}
	if err := rep.Err(); err != nil {
		return nil, "", fmt.Errorf("create node config image: %s has errors:\n%w", p, err)
	}
	return nc, arch, nil
}

// checkCluster names every piece the image needs that c lacks, with the
// cluster object it is read from.
func checkCluster(c kube.ClusterInfo) error {
	var probs []string
	need := func(ok bool, msg string) {
		if !ok {
			probs = append(probs, msg)
		}
	}
	need(c.ClusterID != "", "ClusterVersion version: spec.clusterID is empty (the cluster's id, add-nodes.env's CLUSTER_ID)")
	need(c.ReleaseImage != "", "ClusterVersion version: status.history[0].image is empty (the release the added hosts install)")
	need(c.Version != "", "ClusterVersion version: status.history[0].version is empty (names the cluster image set)")
	need(c.APIDNSName != "", "Infrastructure cluster: status.apiServerURL names no host (add-nodes.env's CLUSTER_API_VIP_DNS_NAME)")
	need(c.APIDNSName == "" || (c.ClusterName != "" && c.BaseDomain != ""),
		fmt.Sprintf("Infrastructure cluster: status.apiServerURL's host %q is not api.<cluster>.<base domain>", c.APIDNSName))
	need(len(strings.TrimSpace(string(c.PullSecret))) > 0, "Secret openshift-config/pull-secret: data[.dockerconfigjson] is empty")
	if len(c.PullSecret) > 0 && !json.Valid(c.PullSecret) {
		probs = append(probs, "Secret openshift-config/pull-secret: data[.dockerconfigjson] is not JSON")
	}
	if w := c.WorkerIgnition; w != nil {
		if err := checkIgnitionEndpoint(*w); err != nil {
			probs = append(probs, "Secret openshift-machine-api/worker-user-data-managed: "+err.Error())
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("%w:\n  %s", ErrCluster, strings.Join(probs, "\n  "))
	}
	return nil
}

// checkIgnitionEndpoint checks the worker pool's machine config server:
// an https URL and, when set, a CA that is base64 PEM certificates.
func checkIgnitionEndpoint(w onhost.WorkerIgnitionEndpoint) error {
	if !strings.HasPrefix(w.URL, "https://") && !strings.HasPrefix(w.URL, "http://") {
		return fmt.Errorf("userData's ignition.config.merge[0].source %q is not an http(s) URL", w.URL)
	}
	if w.CACertificate == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(w.CACertificate)
	if err != nil {
		return fmt.Errorf("userData's ignition.security.tls.certificateAuthorities[0] is not base64: %v", err)
	}
	if blk, _ := pem.Decode(b); blk == nil || blk.Type != "CERTIFICATE" {
		return errors.New("userData's ignition.security.tls.certificateAuthorities[0] holds no PEM certificate")
	}
	return nil
}

// Members lists the node config image's files in the order they are
// written, parent directories first and /etc/assisted/rendezvous-host.env
// last: the ZTP manifests a day-2 import needs (no cluster-deployment.yaml
// nor agent-cluster-install.yaml: the cluster exists), the host configs,
// hostnames and network keyfiles as day 1 writes them, assisted-service.env
// with the day-2 tokens, the pull secret, clientid.conf, add-nodes.env and
// clusterconfig/, then rendezvous-host.env with NODE_ZERO_IP=127.0.0.1 and
// WORKFLOW_TYPE=addnodes. arch is the hosts' architecture (Go's name).
func Members(nc *inputs.NodesConfig, c kube.ClusterInfo, arch string, st *State) ([]configimage.Member, error) {
	spec := manifests.Spec{
		ClusterName: c.ClusterName, BaseDomain: c.BaseDomain,
		ReleaseImage: c.ReleaseImage, Version: c.Version,
		// The cluster is installed: its control plane is not the
		// image's business. Generate wants one for the
		// AgentClusterInstall, which the image leaves out.
		ControlPlaneAgents: 1,
		SSHKey:             nc.SSHKey,
		PullSecret:         string(c.PullSecret),
		CPUArchitecture:    arch,
	}
	for i, h := range nc.Hosts {
		mh := manifests.Host{Hostname: h.Hostname, Role: "worker"}
		for _, itf := range h.Interfaces {
			mh.Interfaces = append(mh.Interfaces, manifests.Interface{Name: itf.Name, MACAddress: strings.ToLower(itf.MacAddress)})
		}
		b, err := h.NetworkConfigYAML()
		if err != nil {
			return nil, fmt.Errorf("%s: %s.networkConfig: %w", inputs.NodesConfigFile, report.Index("hosts", i), err)
		}
		mh.NetworkConfig = string(b)
		spec.Hosts = append(spec.Hosts, mh)
	}
	set, err := manifests.Generate(spec)
	if err != nil {
		return nil, err
	}
	files, err := set.Files()
	if err != nil {
		return nil, err
	}
	var ms []configimage.Member
	add := func(p string, mode fs.FileMode, data []byte) {
		ms = append(ms, configimage.Member{Path: p, Mode: mode, Data: data})
	}
	for _, f := range files {
		dir, name := path.Split(f.Name)
		if path.Clean(dir) != manifests.ClusterManifestsDir || name == manifests.ClusterDeploymentFile || name == manifests.AgentClusterInstallFile {
			continue
		}
		add(path.Join(configimage.ManifestsDir, name), 0o600, f.Data)
	}
	hosts := append([]inputs.Host(nil), nc.Hosts...)
	for i := range hosts {
		if hosts[i].Role == "" {
			hosts[i].Role = "worker" // day-2 hosts are workers; say so to apply-host-config
		}
	}
	hms, err := configimage.HostMembers(hosts)
	if err != nil {
		return nil, err
	}
	ms = append(ms, hms...)
	netDirs, err := configimage.NetworkDirs(set.NMStateConfigs)
	if err != nil {
		return nil, err
	}
	for _, d := range netDirs {
		for _, f := range d.Files {
			add(path.Join(configimage.NetworkDir, d.Name, f.Name), 0o600, f.Data)
		}
	}
	pub, err := tokenPublicKey(st)
	if err != nil {
		return nil, err
	}
	rel, err := json.Marshal([]map[string]string{{"cpu_architecture": manifests.RPMArch(arch), "openshift_version": c.Version, "url": c.ReleaseImage, "version": c.Version}})
	if err != nil {
		return nil, err
	}
	add(onhost.AssistedServiceEnvPath, 0o600, onhost.AssistedServiceEnv(onhost.ServiceEnv{
		InfraEnvID: st.InfraEnvID, PublicKeyPEM: pub, ReleaseImages: string(rel),
		UserToken: st.Tokens[configimage.TokenUser], WatcherToken: st.Tokens[configimage.TokenWatcher],
	}))
	add(configimage.PullSecretPath, 0o600, []byte(set.PullSecret.PullSecret()))
	add(configimage.ClientIDConfPath, 0o600, configimage.ClientIDConf())
	add(onhost.AddNodesEnvPath, 0o600, onhost.AddNodesEnv{
		ClusterID: c.ClusterID, ClusterName: c.ClusterName, APIVIPDNSName: c.APIDNSName, TokenExpiry: st.TokenExpiry,
	}.Marshal())
	umn := c.UserManagedNetworking
	icc, err := json.Marshal(onhost.ImportClusterConfig{Networking: onhost.ImportNetworking{UserManagedNetworking: &umn}})
	if err != nil {
		return nil, err
	}
	add(path.Join(onhost.ClusterConfigDir, onhost.ImportClusterConfigFile), 0o600, icc)
	if c.WorkerIgnition != nil {
		wie, err := json.Marshal(c.WorkerIgnition)
		if err != nil {
			return nil, err
		}
		add(path.Join(onhost.ClusterConfigDir, onhost.WorkerIgnitionEndpointFile), 0o600, wie)
	}
	add(onhost.RendezvousEnvPath, 0o600, onhost.RendezvousEnv(NodeZeroIP,
		st.Tokens[configimage.TokenAgent], st.Tokens[configimage.TokenUser], onhost.WorkflowAddNodes))
	return configimage.WithParentDirs(ms), nil
}

func tokenPublicKey(st *State) ([]byte, error) {
	return credentials.TokenPublicKeyPEM(st.ECPrivateKeyPEM)
}

// hostName is a host's directory name under hostconfig/, as day 1 names it.
func hostName(h inputs.Host, i int) string {
	if h.Hostname != "" {
		return h.Hostname
	}
	return fmt.Sprintf("host-%d", i)
}
