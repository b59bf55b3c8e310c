package onhost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// The files of ABI's add-nodes workflow (docs/reference/abi-on-host.md §1.1,
// §2, §3.7): a host booted from a node config image is its own node zero
// (NODE_ZERO_IP=127.0.0.1), imports the installed cluster instead of
// registering one, and installs itself as a day-2 host.
const (
	// AddNodesEnvPath holds the cluster to import and the tokens' expiry.
	AddNodesEnvPath = "/etc/assisted/add-nodes.env"
	// ClusterConfigDir holds the day-2 data the import sends to the
	// service: WorkerIgnitionEndpointFile and ImportClusterConfigFile.
	ClusterConfigDir           = "/etc/assisted/clusterconfig"
	WorkerIgnitionEndpointFile = "worker-ignition-endpoint.json"
	ImportClusterConfigFile    = "import-cluster-config.json"
)

// AddNodesEnv is /etc/assisted/add-nodes.env.
type AddNodesEnv struct {
	ClusterID     string    // CLUSTER_ID: the OpenShift cluster's id (ClusterVersion spec.clusterID)
	ClusterName   string    // CLUSTER_NAME
	APIVIPDNSName string    // CLUSTER_API_VIP_DNS_NAME: api.<cluster>.<domain>
	TokenExpiry   time.Time // AUTH_TOKEN_EXPIRY, RFC 3339 in UTC
}

// Marshal writes the env file.
func (e AddNodesEnv) Marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "CLUSTER_ID=%s\n", e.ClusterID)
	fmt.Fprintf(&b, "CLUSTER_NAME=%s\n", e.ClusterName)
	fmt.Fprintf(&b, "CLUSTER_API_VIP_DNS_NAME=%s\n", e.APIVIPDNSName)
	fmt.Fprintf(&b, "AUTH_TOKEN_EXPIRY=%s\n", e.TokenExpiry.UTC().Format(time.RFC3339))
	return b.Bytes()
}

// Expired reports whether the tokens have expired at now.
func (e AddNodesEnv) Expired(now time.Time) bool { return !now.Before(e.TokenExpiry) }

// ParseAddNodesEnv reads add-nodes.env; name is for errors. Every key must
// be present and AUTH_TOKEN_EXPIRY be RFC 3339.
func ParseAddNodesEnv(name string, data []byte) (AddNodesEnv, error) {
	m, err := ParseEnv(name, data)
	if err != nil {
		return AddNodesEnv{}, err
	}
	for _, k := range []string{"CLUSTER_ID", "CLUSTER_NAME", "CLUSTER_API_VIP_DNS_NAME", "AUTH_TOKEN_EXPIRY"} {
		if m[k] == "" {
			return AddNodesEnv{}, fmt.Errorf("%s: %s is missing", name, k)
		}
	}
	exp, err := time.Parse(time.RFC3339, m["AUTH_TOKEN_EXPIRY"])
	if err != nil {
		return AddNodesEnv{}, fmt.Errorf("%s: AUTH_TOKEN_EXPIRY: want RFC 3339 (2006-01-02T15:04:05Z), got %q", name, m["AUTH_TOKEN_EXPIRY"])
	}
	return AddNodesEnv{ClusterID: m["CLUSTER_ID"], ClusterName: m["CLUSTER_NAME"],
		APIVIPDNSName: m["CLUSTER_API_VIP_DNS_NAME"], TokenExpiry: exp.UTC()}, nil
}

// ImportClusterConfig is clusterconfig/import-cluster-config.json, what the
// import sets on the imported cluster besides its name and id (the
// agent-installer-client's ClusterConfig).
type ImportClusterConfig struct {
	Networking ImportNetworking `json:"networking"`
}

// ImportNetworking is import-cluster-config.json's networking.
type ImportNetworking struct {
	UserManagedNetworking *bool `json:"userManagedNetworking,omitempty"`
}

// WorkerIgnitionEndpoint is clusterconfig/worker-ignition-endpoint.json:
// the installed cluster's machine config server for the worker pool and
// its CA, as assisted's ignition-endpoint (the CA base64 PEM).
type WorkerIgnitionEndpoint struct {
	URL           string `json:"url"`
	CACertificate string `json:"ca_certificate,omitempty"`
}

// ParseJSONFile decodes one JSON document of a clusterconfig file into v,
// refusing unknown fields and trailing data; name is for errors.
func ParseJSONFile(name string, data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if rest := bytes.TrimSpace(data[d.InputOffset():]); len(rest) > 0 {
		return fmt.Errorf("%s: data after the JSON document at offset %d", name, d.InputOffset())
	}
	return nil
}
