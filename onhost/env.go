package onhost

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// The env files of an agent-based install (docs/reference/abi-on-host.md §2):
// systemd EnvironmentFile syntax, one KEY=VALUE a line, no quoting.

// Workflow types of WORKFLOW_TYPE.
const (
	WorkflowInstall  = "install"
	WorkflowAddNodes = "addnodes"
)

// RendezvousEnv is /etc/assisted/rendezvous-host.env: node zero's address,
// the service URLs built from it (IPv6 in brackets, the address in its
// canonical form), the agent and user tokens and the workflow.
func RendezvousEnv(nodeZero netip.Addr, agentToken, userToken, workflow string) []byte {
	return rendezvousEnv(nodeZero, "http", agentToken, userToken, workflow)
}

// RendezvousEnvHTTPS is RendezvousEnv for a node zero whose API serves
// HTTPS (the install directory's tls/, apitls.go): SERVICE_BASE_URL and
// AIUI_APP_API_URL are https://. The image service and the UI, which
// nodezero does not serve, keep ABI's http://.
func RendezvousEnvHTTPS(nodeZero netip.Addr, agentToken, userToken, workflow string) []byte {
	return rendezvousEnv(nodeZero, "https", agentToken, userToken, workflow)
}

func rendezvousEnv(nodeZero netip.Addr, apiScheme, agentToken, userToken, workflow string) []byte {
	ip := nodeZero.Unmap().String()
	u := func(port string) string {
		return (&url.URL{Scheme: "http", Host: net.JoinHostPort(ip, port), Path: "/"}).String()
	}
	service := (&url.URL{Scheme: apiScheme, Host: net.JoinHostPort(ip, "8090"), Path: "/"}).String()
	var b bytes.Buffer
	fmt.Fprintf(&b, "NODE_ZERO_IP=%s\n", ip)
	fmt.Fprintf(&b, "SERVICE_BASE_URL=%s\n", service)
	fmt.Fprintf(&b, "IMAGE_SERVICE_BASE_URL=%s\n", u("8888"))
	fmt.Fprintf(&b, "PULL_SECRET_TOKEN=%s\n", agentToken)
	fmt.Fprintf(&b, "USER_AUTH_TOKEN=%s\n", userToken)
	fmt.Fprintf(&b, "WORKFLOW_TYPE=%s\n", workflow)
	fmt.Fprintf(&b, "AIUI_APP_API_URL=%s\n", service)
	fmt.Fprintf(&b, "AIUI_URL=%s\n", u("3001"))
	return b.Bytes()
}

// HubRendezvousEnv is the rendezvous-host.env of a host that is an agent
// of a service running elsewhere (a hub: the Cluster API providers'
// `nodezero service`): SERVICE_BASE_URL is the hub's URL as given,
// INFRA_ENV_ID the infra-env the host registers into with the agent token
// alone. It has no NODE_ZERO_IP and no user token: such a host never
// becomes node zero and never lists infra-envs.
func HubRendezvousEnv(serviceURL, agentToken, infraEnvID string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "SERVICE_BASE_URL=%s\n", serviceURL)
	fmt.Fprintf(&b, "PULL_SECRET_TOKEN=%s\n", agentToken)
	fmt.Fprintf(&b, "INFRA_ENV_ID=%s\n", infraEnvID)
	fmt.Fprintf(&b, "WORKFLOW_TYPE=%s\n", WorkflowInstall)
	return b.Bytes()
}

// ServiceEnv is what assisted-service.env carries that differs per install.
type ServiceEnv struct {
	InfraEnvID                string
	PublicKeyPEM              []byte // written base64 on one line, as ABI does
	UserToken, WatcherToken   string
	ReleaseImages             string // JSON
	ReleaseImageMirror        string
	PublicContainerRegistries string
}

// AssistedServiceEnv is /usr/local/share/assisted-service/assisted-service.env
// with the keys and fixed values of openshift-install's template; nodezero's
// service reads the auth keys, the infra-env id and the timeouts from it.
func AssistedServiceEnv(e ServiceEnv) []byte {
	lines := []string{
		"AUTH_TYPE=agent-installer-local",
		"DB_HOST=127.0.0.1",
		"DB_NAME=installer",
		"DB_PASS=admin",
		"DB_PORT=5432",
		"DB_USER=admin",
		"DEPLOY_TARGET=onprem",
		"DISK_ENCRYPTION_SUPPORT=true",
		"DUMMY_IGNITION=false",
		"ENABLE_SINGLE_NODE_DNSMASQ=true",
		"EPHEMERAL_INSTALLER_CLUSTER_TLS_CERTS_OVERRIDE_DIR=/opt/agent/tls",
		"HW_VALIDATOR_REQUIREMENTS=TO_BE_REPLACED_BY_SYSTEMD",
		"INSTALL_INVOKER=agent-installer",
		"IPV6_SUPPORT=true",
		"TNA_CLUSTERS_SUPPORT=true",
		"TNF_CLUSTERS_SUPPORT=true",
		"LOG_LEVEL=debug",
		"NTP_DEFAULT_SERVER=",
		"PUBLIC_CONTAINER_REGISTRIES=" + e.PublicContainerRegistries,
		"RELEASE_IMAGES=" + e.ReleaseImages,
		"OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR=" + e.ReleaseImageMirror,
		"STORAGE=filesystem",
		"INFRA_ENV_ID=" + e.InfraEnvID,
		"EC_PUBLIC_KEY_PEM=" + base64.StdEncoding.EncodeToString(e.PublicKeyPEM),
		"USER_AUTH_TOKEN=" + e.UserToken,
		"WATCHER_AUTH_TOKEN=" + e.WatcherToken,
		"HOST_STAGE_WAITING_FOR_CONTROL_PLANE_TIMEOUT=90m",
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// StartClusterEnv is /usr/local/share/start-cluster/start-cluster.env: how
// many control-plane and worker hosts the install waits for.
func StartClusterEnv(masters, workers int) []byte {
	return []byte(fmt.Sprintf("REQUIRED_MASTER_NODES=%d\nREQUIRED_WORKER_NODES=%d\n", masters, workers))
}

// ParseEnv reads an env file: KEY=VALUE lines, blank lines and # comments
// skipped. A line without '=' or a repeated key is an error naming its line.
func ParseEnv(name string, data []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE, got %q", name, n, line)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s:%d: %s is set twice", name, n, k)
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// Rendezvous is what a host reads from rendezvous-host.env.
type Rendezvous struct {
	NodeZeroIP     netip.Addr
	ServiceBaseURL string
	AgentToken     string // PULL_SECRET_TOKEN
	UserToken      string // USER_AUTH_TOKEN
	Workflow       string // WORKFLOW_TYPE ("" in a file agent-tui wrote)
	// InfraEnvID is INFRA_ENV_ID, set only for an agent of a hub service
	// (HubRendezvousEnv): the host registers straight into it and is
	// never node zero.
	InfraEnvID string
}

// Hub reports whether the host is an agent of a hub service
// (INFRA_ENV_ID is set).
func (r Rendezvous) Hub() bool { return r.InfraEnvID != "" }

// ParseRendezvous reads rendezvous-host.env; name is for errors.
// NODE_ZERO_IP must be an address and SERVICE_BASE_URL present; a hub
// agent's file (INFRA_ENV_ID set) may leave NODE_ZERO_IP out, and then
// needs PULL_SECRET_TOKEN.
func ParseRendezvous(name string, data []byte) (Rendezvous, error) {
	m, err := ParseEnv(name, data)
	if err != nil {
		return Rendezvous{}, err
	}
	r := Rendezvous{ServiceBaseURL: m["SERVICE_BASE_URL"], AgentToken: m["PULL_SECRET_TOKEN"],
		UserToken: m["USER_AUTH_TOKEN"], Workflow: m["WORKFLOW_TYPE"], InfraEnvID: m["INFRA_ENV_ID"]}
	if ipText, ok := m["NODE_ZERO_IP"]; ok || !r.Hub() {
		ip, err := netip.ParseAddr(ipText)
		if err != nil {
			return Rendezvous{}, fmt.Errorf("%s: NODE_ZERO_IP: %w", name, err)
		}
		r.NodeZeroIP = ip
	}
	if r.Hub() && r.AgentToken == "" {
		return Rendezvous{}, fmt.Errorf("%s: INFRA_ENV_ID is set but PULL_SECRET_TOKEN (the agent token) is missing", name)
	}
	if r.ServiceBaseURL == "" {
		return Rendezvous{}, fmt.Errorf("%s: SERVICE_BASE_URL is missing", name)
	}
	return r, nil
}
