package machineimage

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/inputs"
	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/onhost"
)

// ModTime is every timestamp of an image whose Spec gives none: fixed, so
// that equal specs give equal bytes whenever they are built.
var ModTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Spec is what one Machine's host is given.
type Spec struct {
	// ServiceURL is the hub service's base URL (SERVICE_BASE_URL).
	ServiceURL string
	// AgentToken is the hub's agentAuth token (PULL_SECRET_TOKEN).
	AgentToken string
	// CAPEM is the hub's CA when ServiceURL is https (configimage.APICAPath).
	CAPEM []byte
	// InfraEnvID is the Machine's infra-env (INFRA_ENV_ID).
	InfraEnvID string
	// Machine is written to onhost.MachineBindingPath.
	Machine onhost.MachineBinding

	// Hostname, RootDeviceHints and Interfaces are the host's
	// agent-config.yaml host entry (hostconfig/, hostnames/<first MAC>);
	// NetworkConfig is its NMState YAML, rendered to keyfiles by MAC
	// (network/host0/), which needs Interfaces.
	Hostname        string
	RootDeviceHints inputs.RootDeviceHints
	Interfaces      []inputs.Interface
	NetworkConfig   string
	// NTPSources go to /etc/chrony.conf.
	NTPSources []string
	// ReleaseImage, when set, is the ClusterImageSet's release
	// (configimage.ClusterImageSetPath) that a factory image with a payload
	// compares its own with before loading the image.
	ReleaseImage string
	// ModTime is the image's timestamps; zero means ModTime.
	ModTime time.Time
}

// check names every required field that is missing or malformed.
func (s Spec) check() error {
	var errs []error
	if u, err := url.Parse(s.ServiceURL); s.ServiceURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("serviceURL %q: want an http:// or https:// URL", s.ServiceURL))
	}
	for _, f := range []struct{ name, v string }{
		{"agentToken", s.AgentToken}, {"infraEnvID", s.InfraEnvID},
		{"machine.namespace", s.Machine.Namespace}, {"machine.name", s.Machine.Name},
	} {
		if strings.TrimSpace(f.v) == "" {
			errs = append(errs, fmt.Errorf("%s: required", f.name))
		} else if strings.ContainsAny(f.v, "\n\r") {
			errs = append(errs, fmt.Errorf("%s: must be one line", f.name))
		}
	}
	if s.NetworkConfig != "" && len(s.Interfaces) == 0 {
		errs = append(errs, errors.New("networkConfig: needs interfaces (the keyfiles are chosen by MAC)"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("machine image %s/%s: %w", s.Machine.Namespace, s.Machine.Name, err)
	}
	return nil
}

// Members lists the image's files with their parent directories,
// rendezvous-host.env last (configimage.Build's rule): the host config,
// keyfiles and chrony.conf when given, the release's ClusterImageSet, the
// hub's CA, the Machine binding.
func Members(s Spec) ([]configimage.Member, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	var ms []configimage.Member
	add := func(p string, mode fs.FileMode, data []byte) {
		ms = append(ms, configimage.Member{Path: p, Mode: mode, Data: data})
	}
	host := inputs.Host{Hostname: s.Hostname, RootDeviceHints: s.RootDeviceHints, Interfaces: s.Interfaces}
	if s.Hostname != "" || !s.RootDeviceHints.IsZero() || len(s.Interfaces) > 0 {
		hms, err := configimage.HostMembers([]inputs.Host{host})
		if err != nil {
			return nil, fmt.Errorf("machine image %s/%s: %w", s.Machine.Namespace, s.Machine.Name, err)
		}
		ms = append(ms, hms...)
	}
	if s.NetworkConfig != "" {
		nc := &manifests.NMStateConfig{Spec: manifests.NMStateConfigSpec{Config: manifests.NetConfig(s.NetworkConfig)}}
		for _, itf := range s.Interfaces {
			nc.Spec.Interfaces = append(nc.Spec.Interfaces, manifests.Interface{Name: itf.Name, MACAddress: itf.MacAddress})
		}
		dirs, err := configimage.NetworkDirs([]*manifests.NMStateConfig{nc})
		if err != nil {
			return nil, fmt.Errorf("machine image %s/%s: networkConfig: %w", s.Machine.Namespace, s.Machine.Name, err)
		}
		for _, d := range dirs {
			for _, f := range d.Files {
				add(path.Join(configimage.NetworkDir, d.Name, f.Name), 0o600, f.Data)
			}
		}
	}
	if b := configimage.ChronyConf(s.NTPSources); b != nil {
		add(configimage.ChronyConfPath, 0o644, b)
	}
	if s.ReleaseImage != "" {
		b, err := yaml.Marshal(manifests.ClusterImageSet{
			TypeMeta: manifests.TypeMeta{APIVersion: manifests.HiveAPIVersion, Kind: manifests.KindClusterImageSet},
			Metadata: manifests.ObjectMeta{Name: "machine-release"}, // only spec.releaseImage is read
			Spec:     manifests.ClusterImageSetSpec{ReleaseImage: s.ReleaseImage},
		})
		if err != nil {
			return nil, fmt.Errorf("machine image %s/%s: cluster image set: %w", s.Machine.Namespace, s.Machine.Name, err)
		}
		add(configimage.ClusterImageSetPath, 0o600, b)
	}
	if len(s.CAPEM) > 0 {
		add(configimage.APICAPath, 0o644, s.CAPEM)
	}
	add(onhost.MachineBindingPath, 0o644, s.Machine.Marshal())
	// The tokens: 0600, as Assembly writes rendezvous-host.env.
	add(onhost.RendezvousEnvPath, 0o600, onhost.HubRendezvousEnv(s.ServiceURL, s.AgentToken, s.InfraEnvID))
	return configimage.WithParentDirs(ms), nil
}

// Image is the config image of s: ISO 9660 labelled agent_configimage,
// every timestamp s.ModTime (default ModTime), so equal specs give equal
// bytes.
func Image(s Spec) ([]byte, error) {
	ms, err := Members(s)
	if err != nil {
		return nil, err
	}
	mt := s.ModTime
	if mt.IsZero() {
		mt = ModTime
	}
	return configimage.Build(ms, mt)
}
