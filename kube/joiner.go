package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/nodezero/nodezero/onhost"
)

// Where the node-joiner reads the pull secret and the worker pool's user
// data.
const (
	PullSecretNamespace    = "openshift-config"
	PullSecretName         = "pull-secret"
	WorkerUserDataNS       = "openshift-machine-api"
	WorkerUserDataName     = "worker-user-data-managed"
	WorkerUserDataKey      = "userData"
	architectureUnknownFix = "set cpuArchitecture in nodes-config.yaml"
)

// apiName is api.<cluster>.<domain>, as the node-joiner splits it.
var apiName = regexp.MustCompile(`^api\.([^.]+)\.(.+)$`)

// ClusterInfoError lists everything ReadClusterInfo could not read, each
// naming the object and the field.
type ClusterInfoError struct {
	Problems []string
	errs     []error
}

func (e *ClusterInfoError) Error() string {
	return "read the installed cluster's API:\n  " + strings.Join(e.Problems, "\n  ")
}

// Unwrap gives the API's errors (ErrUnauthorized, ErrNotFound...).
func (e *ClusterInfoError) Unwrap() []error { return e.errs }

func (e *ClusterInfoError) add(err error, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if err != nil {
		msg += ": " + err.Error()
		e.errs = append(e.errs, err)
	}
	e.Problems = append(e.Problems, msg)
}

// ReadClusterInfo reads what adding nodes needs of an installed cluster,
// as openshift/installer's node-joiner does (docs/reference/abi-on-host.md
// §1.1): ClusterVersion version's spec.clusterID and status.history[0]
// (version, image); Infrastructure cluster's status.apiServerURL (api.
// <cluster>.<domain>) and spec.platformSpec.type; Secret openshift-config/
// pull-secret's .dockerconfigjson; the architecture of a control-plane
// Node (node-role.kubernetes.io/master), else arch (nodes-config.yaml's
// cpuArchitecture); and the worker pool's machine config server and CA
// from Secret openshift-machine-api/worker-user-data-managed's pointer
// Ignition (none when the secret is absent or names no CA). Every problem
// is reported at once, in a *ClusterInfoError.
func ReadClusterInfo(ctx context.Context, c *Client, arch string) (*ClusterInfo, error) {
	ci := &ClusterInfo{}
	e := &ClusterInfoError{}

	if cv, err := c.GetClusterVersion(ctx, ClusterVersionName); err != nil {
		e.add(err, "ClusterVersion %s", ClusterVersionName)
	} else {
		ci.ClusterID = cv.Spec.ClusterID
		if ci.ClusterID == "" {
			e.add(nil, "ClusterVersion %s: spec.clusterID is empty", ClusterVersionName)
		}
		if len(cv.Status.History) == 0 {
			e.add(nil, "ClusterVersion %s: status.history is empty", ClusterVersionName)
		} else {
			h := cv.Status.History[0]
			ci.Version, ci.ReleaseImage = h.Version, h.Image
			if h.Version == "" {
				e.add(nil, "ClusterVersion %s: status.history[0].version is empty", ClusterVersionName)
			}
			if h.Image == "" {
				e.add(nil, "ClusterVersion %s: status.history[0].image is empty", ClusterVersionName)
			}
		}
	}

	if inf, err := c.GetInfrastructure(ctx); err != nil {
		e.add(err, "Infrastructure %s", InfrastructureName)
	} else {
		u, perr := url.Parse(inf.Status.APIServerURL)
		m := []string(nil)
		if perr == nil {
			m = apiName.FindStringSubmatch(u.Hostname())
		}
		if m == nil {
			e.add(nil, "Infrastructure %s: status.apiServerURL %q is not https://api.<cluster>.<domain>:<port>", InfrastructureName, inf.Status.APIServerURL)
		} else {
			ci.APIDNSName, ci.ClusterName, ci.BaseDomain = m[0], m[1], m[2]
		}
		ci.PlatformType = inf.Spec.PlatformSpec.Type
		if ci.PlatformType == "" && inf.Status.PlatformStatus != nil {
			ci.PlatformType = inf.Status.PlatformStatus.Type // clusters older than platformSpec
		}
		if ci.PlatformType == "" {
			e.add(nil, "Infrastructure %s: spec.platformSpec.type is empty", InfrastructureName)
		}
		ci.UserManagedNetworking = ci.PlatformType == PlatformNone
	}

	if s, err := c.GetSecret(ctx, PullSecretNamespace, PullSecretName); err != nil {
		e.add(err, "Secret %s/%s", PullSecretNamespace, PullSecretName)
	} else if b := s.Data[DockerConfigJSONKey]; len(b) == 0 {
		e.add(nil, "Secret %s/%s: data[%q] is missing", PullSecretNamespace, PullSecretName, DockerConfigJSONKey)
	} else {
		ci.PullSecret = b
	}

	if nodes, err := c.ListNodes(ctx, LabelMasterRole); err != nil {
		e.add(err, "Nodes labelled %s", LabelMasterRole)
	} else {
		for _, n := range nodes {
			if a := n.Status.NodeInfo.Architecture; a != "" {
				ci.Architecture = a
				break
			}
		}
		if ci.Architecture == "" {
			ci.Architecture = arch
		}
		if ci.Architecture == "" {
			e.add(nil, "no control-plane Node (labelled %s) gives the architecture; %s", LabelMasterRole, architectureUnknownFix)
		}
	}

	if s, err := c.GetSecret(ctx, WorkerUserDataNS, WorkerUserDataName); errors.Is(err, ErrNotFound) {
		// No endpoint: the hosts are told none (assisted then uses its
		// default, the cluster's api-int).
	} else if err != nil {
		e.add(err, "Secret %s/%s", WorkerUserDataNS, WorkerUserDataName)
	} else if ep, perr := parsePointerIgnition(s.Data[WorkerUserDataKey]); perr != nil {
		e.add(nil, "Secret %s/%s: data[%q]: %v", WorkerUserDataNS, WorkerUserDataName, WorkerUserDataKey, perr)
	} else {
		ci.WorkerIgnition = ep
	}

	if len(e.Problems) > 0 {
		return ci, e
	}
	return ci, nil
}

// parsePointerIgnition reads the worker pool's pointer Ignition: the URL
// of ignition.config.merge[0] and, after the first "," of the data URL of
// ignition.security.tls.certificateAuthorities[0], the CA (base64). No CA:
// no endpoint.
func parsePointerIgnition(b []byte) (*onhost.WorkerIgnitionEndpoint, error) {
	var ign PointerIgnition
	if len(b) == 0 {
		return nil, errors.New("missing")
	}
	if err := json.Unmarshal(b, &ign); err != nil {
		return nil, fmt.Errorf("not an Ignition config: %v", err)
	}
	cas := ign.Ignition.Security.TLS.CertificateAuthorities
	if len(cas) == 0 {
		return nil, nil
	}
	merge := ign.Ignition.Config.Merge
	if len(merge) == 0 || merge[0].Source == "" {
		return nil, errors.New("ignition.config.merge[0].source is missing")
	}
	_, ca, ok := strings.Cut(cas[0].Source, ",")
	if !ok || ca == "" {
		return nil, fmt.Errorf("ignition.security.tls.certificateAuthorities[0].source %q is not a data URL", trimMessage(cas[0].Source))
	}
	return &onhost.WorkerIgnitionEndpoint{URL: merge[0].Source, CACertificate: ca}, nil
}

// PointerIgnition is the shape of a pointer Ignition config as the worker
// pool's user data holds it: the config to merge and the CA to trust (a
// data URL), the only fields adding nodes reads or the local API writes.
type PointerIgnition struct {
	Ignition struct {
		Config struct {
			Merge []IgnitionSource `json:"merge"`
		} `json:"config"`
		Security struct {
			TLS struct {
				CertificateAuthorities []IgnitionSource `json:"certificateAuthorities,omitempty"`
			} `json:"tls"`
		} `json:"security"`
		Version string `json:"version,omitempty"`
	} `json:"ignition"`
}

// IgnitionSource is an Ignition resource named by its source URL.
type IgnitionSource struct {
	Source string `json:"source"`
}
