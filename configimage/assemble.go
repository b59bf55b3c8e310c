package configimage

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/netip"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/configimage/inputs"
	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/configimage/nmstate"
	"github.com/nodezero/nodezero/onhost"
)

// On-host directories of the config image's members
// (docs/reference/abi-on-host.md §2, §8.3).
const (
	ManifestsDir      = "/etc/assisted/manifests"
	ExtraManifestsDir = "/etc/assisted/extra-manifests"
	HostConfigDir     = "/etc/assisted/hostconfig"
	HostnamesDir      = "/etc/assisted/hostnames"
	NetworkDir        = "/etc/assisted/network"
	TLSDir            = "/opt/agent/tls"
	PullSecretPath    = "/root/.docker/config.json"
)

// Token scheme names, as credentials.State.Tokens keys them.
const (
	TokenAgent   = "agentAuth"
	TokenUser    = "userAuth"
	TokenWatcher = "watcherAuth"
)

// Assembly is everything a config image is made of.
type Assembly struct {
	Manifests      *manifests.Set
	AgentConfig    *inputs.AgentConfig
	AgentConfigRaw []byte // copied to /etc/assisted/manifests/agent-config.yaml, as ABI does
	State          *credentials.State
	ReleaseImage   string
	APITLS         *APITLS // nil: node zero's API serves HTTP (apitls.go)
}

// Members lists the config image's files in the order ABI writes them,
// /etc/assisted/rendezvous-host.env last, with the modes of
// openshift-install's agent Ignition: 0600 for the files of its
// data/agent/files tree (assisted-service.env, start-cluster.env, the pull
// secret, clientid.conf, 10-default-env.conf), the ZTP manifests, the
// hostname files, the network keyfiles and everything under /opt/agent/tls;
// 0644 for host configs, extra manifests and chrony.conf. rendezvous-host.env
// carries the agent and user tokens: 0600, as newer installers write it.
func (a *Assembly) Members() ([]Member, error) {
	if a.AgentConfig == nil {
		return nil, fmt.Errorf("%s: missing: a config image needs it, for its rendezvousIP (the address of the host that becomes node zero); its hosts and networks are optional", AgentConfigFile)
	}
	if a.AgentConfig.RendezvousIP == "" {
		return nil, fmt.Errorf("%s: rendezvousIP: required for a config image: the hosts need to know which of them is node zero", AgentConfigFile)
	}
	rv, err := netip.ParseAddr(a.AgentConfig.RendezvousIP)
	if err != nil {
		return nil, fmt.Errorf("%s: rendezvousIP: %w", AgentConfigFile, err)
	}
	for _, k := range []string{TokenAgent, TokenUser, TokenWatcher} {
		if a.State.Tokens[k] == "" {
			return nil, fmt.Errorf("config image: the %s token is missing from the credentials state", k)
		}
	}
	var ms []Member
	add := func(p string, mode fs.FileMode, data []byte) {
		ms = append(ms, Member{Path: p, Mode: mode, Data: data})
	}
	files, err := a.Manifests.Files()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		switch {
		case strings.HasPrefix(f.Name, manifests.ClusterManifestsDir+"/"):
			add(path.Join(ManifestsDir, path.Base(f.Name)), 0o600, f.Data)
		case strings.HasPrefix(f.Name, manifests.ExtraManifestsDir+"/"):
			add(path.Join(ExtraManifestsDir, path.Base(f.Name)), 0o644, f.Data)
		}
	}
	if len(a.AgentConfigRaw) > 0 {
		add(path.Join(ManifestsDir, AgentConfigFile), 0o600, a.AgentConfigRaw)
	}
	hms, err := HostMembers(a.AgentConfig.Hosts)
	if err != nil {
		return nil, err
	}
	for _, m := range hms {
		add(m.Path, m.Mode, m.Data)
	}
	netDirs, err := NetworkDirs(a.Manifests.NMStateConfigs)
	if err != nil {
		return nil, err
	}
	for _, d := range netDirs {
		for _, f := range d.Files {
			add(path.Join(NetworkDir, d.Name, f.Name), 0o600, f.Data)
		}
	}
	masters, workers := a.Manifests.AgentClusterInstall.Spec.ProvisionRequirements.ControlPlaneAgents, a.Manifests.AgentClusterInstall.Spec.ProvisionRequirements.WorkerAgents
	add(onhost.StartClusterEnvPath, 0o600, onhost.StartClusterEnv(masters, workers))
	pub, err := a.State.PublicKeyPEM()
	if err != nil {
		return nil, err
	}
	version := strings.TrimPrefix(a.Manifests.ClusterImageSet.Metadata.Name, "openshift-")
	rel, _ := json.Marshal([]map[string]string{{"cpu_architecture": "x86_64", "openshift_version": version, "url": a.ReleaseImage, "version": version}})
	add(onhost.AssistedServiceEnvPath, 0o600, onhost.AssistedServiceEnv(onhost.ServiceEnv{
		InfraEnvID: a.State.InfraEnvID, PublicKeyPEM: pub, ReleaseImages: string(rel),
		UserToken: a.State.Tokens[TokenUser], WatcherToken: a.State.Tokens[TokenWatcher],
	}))
	for _, name := range sortedKeys(a.State.TLSFiles()) {
		add(path.Join(TLSDir, name), 0o600, a.State.TLSFiles()[name])
	}
	add(PullSecretPath, 0o600, []byte(a.Manifests.PullSecret.PullSecret()))
	add(ClientIDConfPath, 0o600, ClientIDConf())
	if b := DefaultEnvConf(proxyOf(a.Manifests)); b != nil {
		add(DefaultEnvConfPath, 0o600, b) // a proxy URL may carry a password
	}
	if a.Manifests.InfraEnv != nil {
		if b := ChronyConf(a.Manifests.InfraEnv.Spec.AdditionalNTPSources); b != nil {
			add(ChronyConfPath, 0o644, b)
		}
	}
	rendezvousEnv := onhost.RendezvousEnv
	if a.APITLS != nil {
		for _, m := range a.APITLS.members() {
			add(m.Path, m.Mode, m.Data)
		}
		rendezvousEnv = onhost.RendezvousEnvHTTPS
	}
	add(onhost.RendezvousEnvPath, 0o600, rendezvousEnv(rv, a.State.Tokens[TokenAgent], a.State.Tokens[TokenUser], onhost.WorkflowInstall))
	return WithParentDirs(ms), nil
}

// HostMembers are the per-host files of agent-config (or nodes-config)
// hosts: hostconfig/<hostname or host-N>/{mac_addresses,role,
// root-device-hints.yaml} (0644) and hostnames/<first MAC> (0600), in the
// hosts' order.
func HostMembers(hosts []inputs.Host) ([]Member, error) {
	var ms []Member
	for i, h := range hosts {
		name := h.Hostname
		if name == "" {
			name = fmt.Sprintf("host-%d", i)
		}
		hc := manifests.HostConfig{Name: name, Role: h.Role, Hints: hints(h.RootDeviceHints)}
		for _, itf := range h.Interfaces {
			hc.MACs = append(hc.MACs, strings.ToLower(itf.MacAddress))
		}
		hfs, err := manifests.HostConfigFiles(hc)
		if err != nil {
			return nil, err
		}
		for _, f := range hfs {
			ms = append(ms, Member{Path: path.Join(HostConfigDir, name, f.Name), Mode: 0o644, Data: f.Data})
		}
		if h.Hostname != "" && len(hc.MACs) > 0 {
			ms = append(ms, Member{Path: path.Join(HostnamesDir, hc.MACs[0]), Mode: 0o600, Data: []byte(h.Hostname)})
		}
	}
	return ms, nil
}

// WithParentDirs puts the parent directories of ms's files (0755, sorted)
// before them, so a reader sees a directory before its files.
func WithParentDirs(ms []Member) []Member {
	dirs := map[string]bool{}
	for _, m := range ms {
		for d := path.Dir(m.Path); d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var out []Member
	for _, d := range sortedKeys(dirs) {
		out = append(out, Member{Path: d, Mode: fs.ModeDir | 0o755})
	}
	return append(out, ms...)
}

// Image builds the config image with every timestamp at the state's
// generation time: the same inputs and state give the same bytes.
func (a *Assembly) Image() ([]byte, error) {
	ms, err := a.Members()
	if err != nil {
		return nil, err
	}
	return Build(ms, time.Unix(a.State.GeneratedAtUnix, 0).UTC())
}

// NetworkDirs renders the hosts' nmstate documents into the directories
// ABI keeps under /etc/assisted/network: host<N>/ with one NetworkManager
// keyfile per connection, as nmstatectl gc and the installer write them,
// and mac_interface.ini (docs/reference/nmstate-keyfiles.md §0, §2).
func NetworkDirs(configs []*manifests.NMStateConfig) ([]nmstate.HostDir, error) {
	var hosts []nmstate.Host
	for _, c := range configs {
		if c == nil || c.Spec.Config == "" {
			continue
		}
		h := nmstate.Host{NetworkYAML: string(c.Spec.Config)}
		for _, itf := range c.Spec.Interfaces {
			h.NICs = append(h.NICs, nmstate.NIC{MAC: itf.MACAddress, Name: itf.Name})
		}
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 {
		return nil, nil
	}
	dirs, err := nmstate.HostDirs(hosts)
	if err != nil {
		return nil, fmt.Errorf("static network configuration is not valid: %w", err)
	}
	return dirs, nil
}

func hints(h inputs.RootDeviceHints) *manifests.RootDeviceHints {
	if h.IsZero() {
		return nil
	}
	return &manifests.RootDeviceHints{
		DeviceName: h.DeviceName, HCTL: h.HCTL, Model: h.Model, Vendor: h.Vendor, SerialNumber: h.SerialNumber,
		MinSizeGigabytes: h.MinSizeGigabytes, WWN: h.WWN, WWNWithExtension: h.WWNWithExtension,
		WWNVendorExtension: h.WWNVendorExtension, Rotational: h.Rotational,
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
