package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/wire"
)

var (
	user           = []auth.Scheme{auth.User}
	agent          = []auth.Scheme{auth.Agent}
	userWatcher    = []auth.Scheme{auth.User, auth.Watcher}
	userAgent      = []auth.Scheme{auth.User, auth.Agent}
	userAgentWatch = []auth.Scheme{auth.User, auth.Agent, auth.Watcher}
)

// table lists the operations this build serves, with the security schemes
// assisted-service's swagger gives each (docs/reference/assisted-service.md §8).
func (s *server) table() []Route {
	const ie, host = Base + "/infra-envs/{infra_env_id}", Base + "/infra-envs/{infra_env_id}/hosts/{host_id}"
	const cl = Base + "/clusters/{cluster_id}"
	return []Route{
		{"GET", "/health", "health", nil, 200, s.health},
		{"GET", Base + "/health", "health", nil, 200, s.health},

		{"POST", Base + "/clusters", "v2RegisterCluster", user, 201, s.registerCluster},
		{"POST", Base + "/clusters/import", "v2ImportCluster", user, 201, s.importCluster},
		{"GET", Base + "/clusters", "v2ListClusters", userWatcher, 200, s.listClusters},
		{"GET", cl, "v2GetCluster", userAgentWatch, 200, s.getCluster},
		{"PATCH", cl, "V2UpdateCluster", user, 201, s.updateCluster},
		{"DELETE", cl, "v2DeregisterCluster", user, 204, s.deregisterCluster},
		{"GET", cl + "/hosts", "ListClusterHosts", userAgent, 200, s.listClusterHosts},
		{"POST", cl + "/actions/install", "v2InstallCluster", user, 202, s.installCluster},
		{"POST", cl + "/actions/cancel", "V2CancelInstallation", user, 202, s.cancelInstallation},
		{"POST", cl + "/actions/reset", "v2ResetCluster", user, 202, s.resetCluster},
		{"PATCH", cl + "/install-config", "v2UpdateClusterInstallConfig", user, 201, s.updateInstallConfig},

		{"POST", cl + "/manifests", "V2CreateClusterManifest", user, 201, s.createManifest},
		{"GET", cl + "/manifests", "V2ListClusterManifests", user, 200, s.listManifests},
		{"PATCH", cl + "/manifests", "V2UpdateClusterManifest", user, 200, s.updateManifest},
		{"DELETE", cl + "/manifests", "V2DeleteClusterManifest", user, 200, s.deleteManifest},
		{"GET", cl + "/manifests/files", "v2DownloadClusterManifest", user, 200, s.downloadManifest},
		{"GET", cl + "/downloads/files", "v2DownloadClusterFiles", userAgent, 200, s.downloadClusterFile},
		{"GET", cl + "/downloads/credentials", "V2DownloadClusterCredentials", userAgent, 200, s.downloadCredentials},
		{"GET", cl + "/credentials", "V2GetCredentials", user, 200, s.getCredentials},
		{"POST", cl + "/actions/complete-installation", "V2CompleteInstallation", agent, 202, s.completeInstallation},
		{"GET", Base + "/infra-env/{infra_env_id}/hosts/{host_id}/downloads/ignition", "v2DownloadHostIgnition", userAgent, 200, s.downloadHostIgnition},

		{"POST", Base + "/infra-envs", "RegisterInfraEnv", user, 201, s.registerInfraEnv},
		{"GET", Base + "/infra-envs", "ListInfraEnvs", userWatcher, 200, s.listInfraEnvs},
		{"GET", ie, "GetInfraEnv", userAgent, 200, s.getInfraEnv},
		{"PATCH", ie, "UpdateInfraEnv", user, 201, s.updateInfraEnv},
		{"DELETE", ie, "DeregisterInfraEnv", user, 204, s.deregisterInfraEnv},

		{"POST", ie + "/hosts", "v2RegisterHost", agent, 201, s.registerHost},
		{"GET", ie + "/hosts", "v2ListHosts", userAgent, 200, s.listHosts},
		{"GET", host, "v2GetHost", user, 200, s.getHost},
		{"PATCH", host, "v2UpdateHost", user, 201, s.updateHost},
		{"DELETE", host, "v2DeregisterHost", user, 204, s.deregisterHost},
		{"PATCH", host + "/actions/reset-validation/{validation_id}", "v2ResetHostValidation", user, 200, s.resetHostValidation},
		{"POST", host + "/actions/install", "v2InstallHost", user, 202, s.installHost},
		{"GET", host + "/instructions", "v2GetNextSteps", agent, 200, s.nextSteps},
		{"POST", host + "/instructions", "v2PostStepReply", agent, 204, s.postStepReply},
		{"PUT", host + "/progress", "v2UpdateHostInstallProgress", agent, 200, s.updateProgress},
		{"PUT", host + "/logs-progress", "v2UpdateHostLogsProgress", agent, 204, s.updateLogsProgress},

		// Uploads are agentAuth only, as the swagger says (ABI's
		// authorizer takes a route's first scheme); downloads userAuth
		// (the swagger's urlAuth is refused in ABI).
		{"POST", cl + "/logs", "V2UploadLogs", agent, 204, s.uploadLogs},
		{"GET", cl + "/logs", "V2DownloadClusterLogs", user, 200, s.downloadLogs},

		{"GET", Base + "/events", "v2ListEvents", userWatcher, 200, s.listEvents},
	}
}

func (s *server) svc() *assisted.Service { return s.cfg.Service }

func (s *server) health(*request) (any, error) { return map[string]string{"status": "ok"}, nil }

func (s *server) registerCluster(r *request) (any, error) {
	var p wire.ClusterCreateParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return s.svc().RegisterCluster(r.Context(), &p)
}

// importCluster makes a day-2 cluster for an installed one
// (v2ImportCluster), as ABI's agent-import-cluster asks.
func (s *server) importCluster(r *request) (any, error) {
	var p wire.ImportClusterParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return s.svc().ImportCluster(r.Context(), &p)
}

func (s *server) listClusters(*request) (any, error) { return s.svc().ListClusters(), nil }

// getCluster takes exclude-hosts: the cluster without its hosts, as the
// installer's waits read it.
func (s *server) getCluster(r *request) (any, error) {
	exclude, err := queryBool(r, "exclude-hosts")
	if err != nil {
		return nil, err
	}
	if exclude {
		return s.svc().GetClusterExcludingHosts(r.param("cluster_id"))
	}
	return s.svc().GetCluster(r.param("cluster_id"))
}

func (s *server) updateCluster(r *request) (any, error) {
	var p wire.V2ClusterUpdateParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return s.svc().UpdateCluster(r.Context(), r.param("cluster_id"), &p)
}

func (s *server) deregisterCluster(r *request) (any, error) {
	id := r.param("cluster_id")
	if err := s.svc().DeregisterCluster(r.Context(), id); err != nil {
		return nil, err
	}
	s.dropLogs(id)
	return nil, nil
}

// listClusterHosts takes assisted's query parameters: role and status
// filter; with-inventory and with-connectivity add those documents, which
// are left out otherwise.
func (s *server) listClusterHosts(r *request) (any, error) {
	q := assisted.HostQuery{Status: wire.HostStatus(r.URL.Query().Get("status"))}
	switch role := wire.HostRole(r.URL.Query().Get("role")); role {
	case "", wire.HostRoleMaster, wire.HostRoleArbiter, wire.HostRoleWorker, wire.HostRoleAutoAssign:
		q.Role = role
	default:
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("query role: %q is not one of master, arbiter, worker, auto-assign", role)}
	}
	var err error
	if q.WithInventory, err = queryBool(r, "with-inventory"); err != nil {
		return nil, err
	}
	if q.WithConnectivity, err = queryBool(r, "with-connectivity"); err != nil {
		return nil, err
	}
	return s.svc().ListClusterHosts(r.param("cluster_id"), q)
}

// installCluster starts an installation; the logs of an earlier attempt
// are deleted, as assisted does when an installation starts.
func (s *server) installCluster(r *request) (any, error) {
	id := r.param("cluster_id")
	c, err := s.svc().InstallCluster(r.Context(), id)
	if err != nil {
		return nil, err
	}
	s.dropLogs(id)
	return c, nil
}

// dropLogs deletes a cluster's stored logs. A failure is logged, not
// returned: the request it follows has succeeded, and a stale bundle
// costs disk, not correctness.
func (s *server) dropLogs(clusterID string) {
	if s.logs == nil {
		return
	}
	if err := s.logs.removeCluster(clusterID); err != nil {
		s.log.Warn("remove logs", "cluster", clusterID, "err", err)
	}
}

func (s *server) cancelInstallation(r *request) (any, error) {
	return s.svc().CancelInstallation(r.Context(), r.param("cluster_id"))
}

func (s *server) resetCluster(r *request) (any, error) {
	return s.svc().ResetCluster(r.Context(), r.param("cluster_id"))
}

func (s *server) registerInfraEnv(r *request) (any, error) {
	var p wire.InfraEnvCreateParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return s.svc().RegisterInfraEnv(r.Context(), &p)
}

func (s *server) listInfraEnvs(r *request) (any, error) {
	return s.svc().ListInfraEnvs(r.URL.Query().Get("cluster_id")), nil
}

func (s *server) getInfraEnv(r *request) (any, error) {
	return s.svc().GetInfraEnv(r.param("infra_env_id"))
}

func (s *server) updateInfraEnv(r *request) (any, error) {
	var p wire.InfraEnvUpdateParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return s.svc().UpdateInfraEnv(r.Context(), r.param("infra_env_id"), &p)
}

func (s *server) deregisterInfraEnv(r *request) (any, error) {
	return nil, s.svc().DeregisterInfraEnv(r.Context(), r.param("infra_env_id"))
}

func (s *server) registerHost(r *request) (any, error) {
	var p wire.HostCreateParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return s.svc().RegisterHost(r.Context(), r.param("infra_env_id"), &p, r.Header.Get("discovery_agent_version"))
}

func (s *server) listHosts(r *request) (any, error) {
	return s.svc().ListHosts(r.param("infra_env_id"))
}

func (s *server) getHost(r *request) (any, error) {
	return s.svc().GetHost(r.param("infra_env_id"), r.param("host_id"))
}

func (s *server) updateHost(r *request) (any, error) {
	var p wire.HostUpdateParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return s.svc().UpdateHost(r.Context(), r.param("infra_env_id"), r.param("host_id"), &p)
}

func (s *server) resetHostValidation(r *request) (any, error) {
	return s.svc().ResetHostValidation(r.Context(), r.param("infra_env_id"), r.param("host_id"), r.param("validation_id"))
}

// installHost installs one known day-2 host (v2InstallHost), as ABI's
// agent-add-node asks once its host is known.
func (s *server) installHost(r *request) (any, error) {
	return s.svc().InstallHost(r.Context(), r.param("infra_env_id"), r.param("host_id"))
}

func (s *server) deregisterHost(r *request) (any, error) {
	return nil, s.svc().DeregisterHost(r.Context(), r.param("infra_env_id"), r.param("host_id"))
}

// nextSteps reads ?timestamp= (the agent's clock) and our ?wait= extension,
// a Go duration ("30s") or whole seconds.
func (s *server) nextSteps(r *request) (any, error) {
	q := r.URL.Query()
	var ts int64
	if v := q.Get("timestamp"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("query timestamp: %q is not an integer", v)}
		}
		ts = n
	}
	var wait time.Duration
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			n, nerr := strconv.Atoi(v)
			if nerr != nil {
				return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("query wait: %q is neither a duration (30s) nor seconds", v)}
			}
			d = time.Duration(n) * time.Second
		}
		if d < 0 {
			return nil, &httpError{http.StatusBadRequest, "query wait: must not be negative"}
		}
		wait = d
	}
	return s.svc().NextSteps(r.Context(), r.param("infra_env_id"), r.param("host_id"), ts, wait, r.Header.Get("discovery_agent_version"))
}

// postStepReply takes an agent's step output. A large one (a connectivity
// report names every other host: 300 KB at a thousand hosts) waits for
// one of a few slots before its body is read, and keeps it until it is
// committed: when a thousand agents answer at once, their bodies wait in
// the kernel's socket buffers instead of the heap, and the service works
// through them a few at a time, which is as fast as its CPUs allow anyway.
func (s *server) postStepReply(r *request) (any, error) {
	if r.ContentLength < 0 || r.ContentLength > SmallBody {
		select {
		case s.bigReplies <- struct{}{}:
			defer func() { <-s.bigReplies }()
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	var p wire.StepReply
	if err := r.decodeStepReply(&p); err != nil {
		return nil, err
	}
	return nil, s.svc().PostStepReply(r.Context(), r.param("infra_env_id"), r.param("host_id"), &p)
}

func (s *server) updateProgress(r *request) (any, error) {
	var p wire.HostProgress
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return nil, s.svc().UpdateHostProgress(r.Context(), r.param("infra_env_id"), r.param("host_id"), &p)
}

func (s *server) listEvents(r *request) (any, error) {
	q := r.URL.Query()
	limit, err := queryInt(r, "limit")
	if err != nil {
		return nil, err
	}
	offset, err := queryInt(r, "offset")
	if err != nil {
		return nil, err
	}
	clusterLevel, err := queryBool(r, "cluster_level")
	if err != nil {
		return nil, err
	}
	hostIDs, err := queryList(r, "host_ids")
	if err != nil {
		return nil, err
	}
	if h := q.Get("host_id"); h != "" {
		hostIDs = append(hostIDs, h)
	}
	severities, err := queryList(r, "severities")
	if err != nil {
		return nil, err
	}
	categories, err := queryList(r, "categories")
	if err != nil {
		return nil, err
	}
	order := q.Get("order")
	if order != "" && order != "ascending" && order != "descending" {
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("query order: %q is not ascending or descending", order)}
	}
	list, err := s.svc().ListEvents(r.Context(), assisted.EventsQuery{
		ClusterID: q.Get("cluster_id"), InfraEnvID: q.Get("infra_env_id"), HostIDs: hostIDs,
		Severities: severities, Categories: categories,
		Message: q.Get("message"), ClusterLevel: clusterLevel, Limit: limit, Offset: offset,
		Descending: order == "descending",
	})
	if err != nil {
		return nil, err
	}
	h := r.w.Header()
	for _, sev := range []string{"info", "warning", "error", "critical"} {
		h.Set("Severity-Count-"+capitalize(sev), strconv.Itoa(list.BySeverity[sev]))
	}
	h.Set("Event-Count", strconv.Itoa(list.Total))
	return list.Events, nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
