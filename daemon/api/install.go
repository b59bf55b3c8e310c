package api

import (
	"fmt"
	"net/http"

	"github.com/nodezero/nodezero/wire"
)

// The installation's downloads and completion (assisted.Service's
// prepare.go and complete.go).

// clusterFileNames is v2DownloadClusterFiles' file_name enum.
var clusterFileNames = map[string]bool{
	wire.FileBootstrapIgnition: true, wire.FileMasterIgnition: true, wire.FileWorkerIgnition: true,
	wire.FileArbiterIgnition: true, wire.FileMetadata: true, wire.FileInstallConfig: true,
}

func (s *server) downloadClusterFile(r *request) (any, error) {
	name := r.URL.Query().Get("file_name")
	if !clusterFileNames[name] {
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("file_name: %q is not one of bootstrap.ign, master.ign, worker.ign, arbiter.ign, metadata.json, install-config.yaml", name)}
	}
	b, err := s.svc().ClusterFile(r.Context(), r.param("cluster_id"), name)
	if err != nil {
		return nil, err
	}
	return &file{name: name, data: b}, nil
}

func (s *server) downloadCredentials(r *request) (any, error) {
	name := r.URL.Query().Get("file_name")
	b, err := s.svc().CredentialsFile(r.Context(), r.param("cluster_id"), name)
	if err != nil {
		return nil, err
	}
	return &file{name: name, data: b}, nil
}

func (s *server) getCredentials(r *request) (any, error) {
	return s.svc().Credentials(r.Context(), r.param("cluster_id"))
}

func (s *server) downloadHostIgnition(r *request) (any, error) {
	hostID := r.param("host_id")
	b, err := s.svc().HostIgnition(r.Context(), r.param("infra_env_id"), hostID)
	if err != nil {
		return nil, err
	}
	return &file{name: "host_" + hostID + ".ign", data: b}, nil
}

func (s *server) completeInstallation(r *request) (any, error) {
	var p wire.CompletionParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return s.svc().CompleteInstallation(r.Context(), r.param("cluster_id"), &p)
}
