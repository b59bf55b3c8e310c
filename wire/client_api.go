package wire

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The endpoints. Paths, methods and success codes are those of
// assisted-service's swagger.yaml (openshift/assisted-service); any 2xx is accepted.

// p joins path segments, escaping each id.
func p(format string, ids ...string) string {
	esc := make([]any, len(ids))
	for i, id := range ids {
		esc[i] = url.PathEscape(id)
	}
	return fmt.Sprintf(format, esc...)
}

// --- agent calls (agentAuth) -------------------------------------------------

// RegisterHost registers a host with an infra-env (v2RegisterHost, 201). A
// host that is already registered gets 201 again (transcript §1.1).
func (c *Client) RegisterHost(ctx context.Context, infraEnvID string, params HostCreateParams) (*HostRegistrationResponse, error) {
	var out HostRegistrationResponse
	err := c.do(ctx, call{method: http.MethodPost, path: p("/infra-envs/%s/hosts", infraEnvID), body: params, out: &out})
	if err != nil {
		return nil, fmt.Errorf("register host: %w", err)
	}
	return &out, nil
}

// NextSteps asks for the host's instructions (v2GetNextSteps) with the
// host's clock in ?timestamp=. When wait > 0 it adds our extension
// &wait=<Go duration>: node zero holds the request until a step is due or
// wait has passed; a real assisted-service ignores the parameter and answers
// at once. The request timeout is extended by wait.
func (c *Client) NextSteps(ctx context.Context, infraEnvID, hostID string, timestamp int64, wait time.Duration) (*Steps, error) {
	q := url.Values{"timestamp": {strconv.FormatInt(timestamp, 10)}}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	var out Steps
	err := c.do(ctx, call{method: http.MethodGet, path: p("/infra-envs/%s/hosts/%s/instructions", infraEnvID, hostID),
		query: q, out: &out, extra: max(wait, 0)})
	if err != nil {
		return nil, fmt.Errorf("get next steps: %w", err)
	}
	return &out, nil
}

// PostStepReply posts one step's result (v2PostStepReply, 204). Zero
// exit_code and empty output and error are omitted on the wire, as the real
// agent sends them.
func (c *Client) PostStepReply(ctx context.Context, infraEnvID, hostID string, reply StepReply) error {
	err := c.do(ctx, call{method: http.MethodPost, path: p("/infra-envs/%s/hosts/%s/instructions", infraEnvID, hostID), body: reply})
	if err != nil {
		return fmt.Errorf("post step reply %s: %w", reply.StepID, err)
	}
	return nil
}

// UpdateHostInstallProgress reports an install stage (v2UpdateHostInstallProgress, 200).
func (c *Client) UpdateHostInstallProgress(ctx context.Context, infraEnvID, hostID string, progress HostProgress) error {
	err := c.do(ctx, call{method: http.MethodPut, path: p("/infra-envs/%s/hosts/%s/progress", infraEnvID, hostID), body: progress})
	if err != nil {
		return fmt.Errorf("update host install progress: %w", err)
	}
	return nil
}

// --- clusters (userAuth; reads also watcherAuth) -----------------------------

// RegisterCluster creates a cluster (v2RegisterCluster, 201).
func (c *Client) RegisterCluster(ctx context.Context, params ClusterCreateParams) (*Cluster, error) {
	var out Cluster
	if err := c.do(ctx, call{method: http.MethodPost, path: "/clusters", body: params, out: &out}); err != nil {
		return nil, fmt.Errorf("register cluster: %w", err)
	}
	return &out, nil
}

// ImportCluster makes a day-2 cluster for an installed OpenShift cluster
// (v2ImportCluster, 201): kind AddHostsCluster, status adding-hosts.
func (c *Client) ImportCluster(ctx context.Context, params ImportClusterParams) (*Cluster, error) {
	var out Cluster
	if err := c.do(ctx, call{method: http.MethodPost, path: "/clusters/import", body: params, out: &out}); err != nil {
		return nil, fmt.Errorf("import cluster: %w", err)
	}
	return &out, nil
}

// ListClusters lists the clusters (v2ListClusters).
func (c *Client) ListClusters(ctx context.Context) (ClusterList, error) {
	var out ClusterList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/clusters", out: &out}); err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	return out, nil
}

// GetCluster reads one cluster (v2GetCluster).
func (c *Client) GetCluster(ctx context.Context, clusterID string) (*Cluster, error) {
	return c.clusterCall(ctx, "get cluster", http.MethodGet, p("/clusters/%s", clusterID), nil)
}

// GetClusterExcludingHosts reads one cluster without its hosts
// (v2GetCluster?exclude-hosts=true), as assisted-installer's waits do: a
// thousand hosts with their reports are 300 MB. A service that ignores the
// parameter answers with the hosts.
func (c *Client) GetClusterExcludingHosts(ctx context.Context, clusterID string) (*Cluster, error) {
	var out Cluster
	q := url.Values{"exclude-hosts": {"true"}}
	if err := c.do(ctx, call{method: http.MethodGet, path: p("/clusters/%s", clusterID), query: q, out: &out}); err != nil {
		return nil, fmt.Errorf("get cluster: %w", err)
	}
	return &out, nil
}

// UpdateCluster patches a cluster (V2UpdateCluster, 201).
func (c *Client) UpdateCluster(ctx context.Context, clusterID string, params V2ClusterUpdateParams) (*Cluster, error) {
	return c.clusterCall(ctx, "update cluster", http.MethodPatch, p("/clusters/%s", clusterID), params)
}

// InstallCluster starts the installation (v2InstallCluster, 202; 409 when
// the cluster is not ready).
func (c *Client) InstallCluster(ctx context.Context, clusterID string) (*Cluster, error) {
	return c.clusterCall(ctx, "install cluster", http.MethodPost, p("/clusters/%s/actions/install", clusterID), nil)
}

// CancelInstallation cancels an installation (V2CancelInstallation, 202).
func (c *Client) CancelInstallation(ctx context.Context, clusterID string) (*Cluster, error) {
	return c.clusterCall(ctx, "cancel installation", http.MethodPost, p("/clusters/%s/actions/cancel", clusterID), nil)
}

// ResetCluster resets a cancelled or failed installation (v2ResetCluster, 202).
func (c *Client) ResetCluster(ctx context.Context, clusterID string) (*Cluster, error) {
	return c.clusterCall(ctx, "reset cluster", http.MethodPost, p("/clusters/%s/actions/reset", clusterID), nil)
}

// DeregisterCluster deletes a cluster and its hosts (v2DeregisterCluster,
// 204; 409 while it installs: cancel first). Its infra-envs stay, unbound.
func (c *Client) DeregisterCluster(ctx context.Context, clusterID string) error {
	if err := c.do(ctx, call{method: http.MethodDelete, path: p("/clusters/%s", clusterID)}); err != nil {
		return fmt.Errorf("deregister cluster: %w", err)
	}
	return nil
}

func (c *Client) clusterCall(ctx context.Context, op, method, path string, body any) (*Cluster, error) {
	var out Cluster
	if err := c.do(ctx, call{method: method, path: path, body: body, out: &out}); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return &out, nil
}

// --- infra-envs --------------------------------------------------------------

// RegisterInfraEnv creates an infra-env (RegisterInfraEnv, 201).
func (c *Client) RegisterInfraEnv(ctx context.Context, params InfraEnvCreateParams) (*InfraEnv, error) {
	return c.infraEnvCall(ctx, "register infra-env", http.MethodPost, "/infra-envs", params)
}

// ListInfraEnvs lists the infra-envs, those of one cluster when clusterID is
// not "" (ListInfraEnvs).
func (c *Client) ListInfraEnvs(ctx context.Context, clusterID string) (InfraEnvList, error) {
	var q url.Values
	if clusterID != "" {
		q = url.Values{"cluster_id": {clusterID}}
	}
	var out InfraEnvList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/infra-envs", query: q, out: &out}); err != nil {
		return nil, fmt.Errorf("list infra-envs: %w", err)
	}
	return out, nil
}

// GetInfraEnv reads one infra-env (GetInfraEnv).
func (c *Client) GetInfraEnv(ctx context.Context, infraEnvID string) (*InfraEnv, error) {
	return c.infraEnvCall(ctx, "get infra-env", http.MethodGet, p("/infra-envs/%s", infraEnvID), nil)
}

// DeregisterInfraEnv deletes an infra-env (DeregisterInfraEnv, 204; 409
// while hosts are registered with it: deregister them first).
func (c *Client) DeregisterInfraEnv(ctx context.Context, infraEnvID string) error {
	if err := c.do(ctx, call{method: http.MethodDelete, path: p("/infra-envs/%s", infraEnvID)}); err != nil {
		return fmt.Errorf("deregister infra-env: %w", err)
	}
	return nil
}

// UpdateInfraEnv patches an infra-env (UpdateInfraEnv, 201).
func (c *Client) UpdateInfraEnv(ctx context.Context, infraEnvID string, params InfraEnvUpdateParams) (*InfraEnv, error) {
	return c.infraEnvCall(ctx, "update infra-env", http.MethodPatch, p("/infra-envs/%s", infraEnvID), params)
}

func (c *Client) infraEnvCall(ctx context.Context, op, method, path string, body any) (*InfraEnv, error) {
	var out InfraEnv
	if err := c.do(ctx, call{method: method, path: path, body: body, out: &out}); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return &out, nil
}

// --- hosts -------------------------------------------------------------------

// ListHosts lists an infra-env's hosts (v2ListHosts; agent or user).
func (c *Client) ListHosts(ctx context.Context, infraEnvID string) (HostList, error) {
	var out HostList
	if err := c.do(ctx, call{method: http.MethodGet, path: p("/infra-envs/%s/hosts", infraEnvID), out: &out}); err != nil {
		return nil, fmt.Errorf("list hosts: %w", err)
	}
	return out, nil
}

// GetHost reads one host (v2GetHost).
func (c *Client) GetHost(ctx context.Context, infraEnvID, hostID string) (*Host, error) {
	var out Host
	if err := c.do(ctx, call{method: http.MethodGet, path: p("/infra-envs/%s/hosts/%s", infraEnvID, hostID), out: &out}); err != nil {
		return nil, fmt.Errorf("get host: %w", err)
	}
	return &out, nil
}

// UpdateHost patches a host: role, hostname, installation disk (v2UpdateHost, 201).
func (c *Client) UpdateHost(ctx context.Context, infraEnvID, hostID string, params HostUpdateParams) (*Host, error) {
	var out Host
	err := c.do(ctx, call{method: http.MethodPatch, path: p("/infra-envs/%s/hosts/%s", infraEnvID, hostID), body: params, out: &out})
	if err != nil {
		return nil, fmt.Errorf("update host: %w", err)
	}
	return &out, nil
}

// InstallHost installs one known day-2 host (v2InstallHost, 202; 409 when
// the host is not known or not a day-2 host).
func (c *Client) InstallHost(ctx context.Context, infraEnvID, hostID string) (*Host, error) {
	var out Host
	if err := c.do(ctx, call{method: http.MethodPost, path: p("/infra-envs/%s/hosts/%s/actions/install", infraEnvID, hostID), out: &out}); err != nil {
		return nil, fmt.Errorf("install host: %w", err)
	}
	return &out, nil
}

// DeregisterHost deletes a host (v2DeregisterHost, 204).
func (c *Client) DeregisterHost(ctx context.Context, infraEnvID, hostID string) error {
	if err := c.do(ctx, call{method: http.MethodDelete, path: p("/infra-envs/%s/hosts/%s", infraEnvID, hostID)}); err != nil {
		return fmt.Errorf("deregister host: %w", err)
	}
	return nil
}

// --- events and health -------------------------------------------------------

// EventsQuery filters ListEvents. Zero fields are not sent.
type EventsQuery struct {
	ClusterID  string
	HostIDs    []string
	InfraEnvID string
	Severities []EventSeverity
	Limit      int // 0 = the service's default
	Offset     int
}

// values encodes q. Array parameters use swagger 2.0's default
// collectionFormat, csv (the swagger sets none for host_ids or severities).
func (q EventsQuery) values() url.Values {
	v := url.Values{}
	if q.ClusterID != "" {
		v.Set("cluster_id", q.ClusterID)
	}
	if len(q.HostIDs) > 0 {
		v.Set("host_ids", strings.Join(q.HostIDs, ","))
	}
	if q.InfraEnvID != "" {
		v.Set("infra_env_id", q.InfraEnvID)
	}
	if len(q.Severities) > 0 {
		s := make([]string, len(q.Severities))
		for i, sev := range q.Severities {
			s[i] = string(sev)
		}
		v.Set("severities", strings.Join(s, ","))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	return v
}

// ListEvents lists events (v2ListEvents).
func (c *Client) ListEvents(ctx context.Context, q EventsQuery) (EventList, error) {
	var out EventList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/events", query: q.values(), out: &out}); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}

// Health checks the service's liveness endpoint, GET /health at the root of
// the base URL (assisted-service's health middleware; not under APIBasePath,
// no authentication).
func (c *Client) Health(ctx context.Context) error {
	if err := c.do(ctx, call{method: http.MethodGet, path: "/health", raw: true}); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	return nil
}
