package api

import (
	"net/http"

	"github.com/nodezero/nodezero/wire"
)

// The install-config overrides and custom manifests of a cluster.

// updateInstallConfig takes the overrides as the swagger's body says: a JSON
// string whose text is the JSON object.
func (s *server) updateInstallConfig(r *request) (any, error) {
	var overrides *string
	if err := r.decode(&overrides); err != nil {
		return nil, err
	}
	if overrides == nil {
		return nil, &httpError{http.StatusBadRequest, "request body: null, a JSON string holding the install config overrides was expected"}
	}
	return nil, s.svc().UpdateInstallConfig(r.Context(), r.param("cluster_id"), *overrides)
}

func (s *server) createManifest(r *request) (any, error) {
	var p wire.CreateManifestParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return s.svc().CreateManifest(r.Context(), r.param("cluster_id"), &p)
}

// listManifests checks include_system_generated and ignores it: the
// service generates no manifests.
func (s *server) listManifests(r *request) (any, error) {
	if _, err := queryBool(r, "include_system_generated"); err != nil {
		return nil, err
	}
	return s.svc().ListManifests(r.param("cluster_id"))
}

func (s *server) updateManifest(r *request) (any, error) {
	var p wire.UpdateManifestParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return s.svc().UpdateManifest(r.Context(), r.param("cluster_id"), &p)
}

func (s *server) deleteManifest(r *request) (any, error) {
	q := r.URL.Query()
	return nil, s.svc().DeleteManifest(r.Context(), r.param("cluster_id"), wire.ManifestFolder(q.Get("folder")), q.Get("file_name"))
}

func (s *server) downloadManifest(r *request) (any, error) {
	q := r.URL.Query()
	name := q.Get("file_name")
	b, err := s.svc().ManifestFile(r.Context(), r.param("cluster_id"), wire.ManifestFolder(q.Get("folder")), name)
	if err != nil {
		return nil, err
	}
	return &file{name: name, data: b}, nil
}
