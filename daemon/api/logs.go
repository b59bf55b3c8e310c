package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/wire"
)

// Log collection routes: the agent's progress reports
// (v2UpdateHostLogsProgress) and uploads (V2UploadLogs), and the user's
// downloads (V2DownloadClusterLogs). The service keeps the states and
// timestamps; the bundles live in Config.LogsDir (logfiles.go).

func (s *server) updateLogsProgress(r *request) (any, error) {
	var p wire.LogsProgressParams
	if err := r.decode(&p); err != nil {
		return nil, err
	}
	return nil, s.svc().UpdateHostLogsProgress(r.Context(), r.param("infra_env_id"), r.param("host_id"), &p)
}

var errNoLogStore = &httpError{http.StatusServiceUnavailable, "log storage is not configured on this service"}

// uploadLogs stores a bundle sent as multipart field upfile. Whose it is
// comes from the query: logs_type host with host_id and infra_env_id of a
// host of the cluster, or logs_type controller. The target is checked
// before the body is read, and the bundle replaces the stored one only
// once it has arrived whole.
func (s *server) uploadLogs(r *request) (any, error) {
	if s.logs == nil {
		return nil, errNoLogStore
	}
	clusterID, q := r.param("cluster_id"), r.URL.Query()
	var path string
	var stamp func() error
	switch typ := wire.LogsType(q.Get("logs_type")); typ {
	case wire.LogsTypeHost:
		ie, host := q.Get("infra_env_id"), q.Get("host_id")
		if ie == "" || host == "" {
			return nil, &httpError{http.StatusBadRequest, "query infra_env_id and host_id: both are required with logs_type host"}
		}
		if err := s.svc().CheckHostLogs(clusterID, ie, host); err != nil {
			return nil, err
		}
		path = s.logs.hostPath(clusterID, host)
		stamp = func() error { return s.svc().HostLogsUploaded(r.Context(), clusterID, ie, host) }
	case wire.LogsTypeController:
		if _, err := s.svc().LogsOf(clusterID); err != nil {
			return nil, err
		}
		path = s.logs.controllerPath(clusterID)
		stamp = func() error { return s.svc().ControllerLogsUploaded(r.Context(), clusterID) }
	case "":
		return nil, &httpError{http.StatusBadRequest, "query logs_type: required, host or controller"}
	default:
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("query logs_type: %q is not host or controller", typ)}
	}
	// A large bundle may take longer than the server's read timeout, set
	// for JSON requests. Not every ResponseWriter can (a recorder in tests).
	_ = http.NewResponseController(r.w).SetReadDeadline(time.Now().Add(transferTimeout))
	r.Body = http.MaxBytesReader(r.w, r.Body, s.logs.max+multipartSlack)
	size, digest, err := s.receiveUpfile(r, path)
	if err != nil {
		return nil, err
	}
	if err := stamp(); err != nil {
		// The host or cluster went away while the bundle arrived: it
		// belongs to nothing now.
		if rerr := removeFile(path); rerr != nil {
			s.log.Warn("remove logs of a vanished target", "path", path, "err", rerr)
		}
		return nil, err
	}
	s.log.Info("logs stored", "cluster", clusterID, "type", q.Get("logs_type"), "host", q.Get("host_id"),
		"bytes", size, "sha256", digest)
	return nil, nil
}

// receiveUpfile finds field upfile in the multipart body and stores it at
// path.
func (s *server) receiveUpfile(r *request, path string) (int64, string, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return 0, "", &httpError{http.StatusBadRequest, fmt.Sprintf("request body: expected multipart/form-data with the file in field %s: %v", wire.LogsUploadField, err)}
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return 0, "", &httpError{http.StatusBadRequest, fmt.Sprintf("request body: no field %s in the multipart form", wire.LogsUploadField)}
		}
		if err != nil {
			return 0, "", s.bodyError(err)
		}
		if part.FormName() != wire.LogsUploadField {
			if _, err := io.Copy(io.Discard, part); err != nil {
				return 0, "", s.bodyError(err)
			}
			continue
		}
		size, digest, err := s.logs.store(path, part)
		var rerr *readError
		var large *errTooLarge
		switch {
		case errors.As(err, &rerr):
			return 0, "", s.bodyError(rerr.err)
		case errors.Is(err, errEmpty):
			return 0, "", &httpError{http.StatusBadRequest, fmt.Sprintf("multipart field %s: the file is empty", wire.LogsUploadField)}
		case errors.As(err, &large):
			// large, not err: the client is not told the server's paths.
			return 0, "", &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("multipart field %s: %v", wire.LogsUploadField, large)}
		case err != nil:
			return 0, "", err // the disk's: a 500, the cause logged
		}
		return size, digest, nil
	}
}

// bodyError is a multipart body the client got wrong: over the limit
// (413), cut off or malformed (400).
func (s *server) bodyError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes (a log file may have %d)", tooBig.Limit, s.logs.max)}
	}
	return &httpError{http.StatusBadRequest, fmt.Sprintf("request body: malformed multipart form: %v", err)}
}

// downloadLogs sends a cluster's logs: one host's bundle (logs_type host,
// or host_id alone), the controller's, or a tar of everything stored for
// the cluster's hosts and controller (logs_type all or none).
func (s *server) downloadLogs(r *request) (any, error) {
	if s.logs == nil {
		return nil, errNoLogStore
	}
	cl, err := s.svc().LogsOf(r.param("cluster_id"))
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	typ, hostID := wire.LogsType(q.Get("logs_type")), q.Get("host_id")
	if typ == "" && hostID != "" {
		typ = wire.LogsTypeHost
	}
	var b *bundle
	switch typ {
	case wire.LogsTypeHost:
		if hostID == "" {
			return nil, &httpError{http.StatusBadRequest, "query host_id: required with logs_type host"}
		}
		h, ok := cl.Host("", hostID)
		if !ok {
			return nil, &httpError{http.StatusNotFound, fmt.Sprintf("host %s is not a host of cluster %s", hostID, cl.ClusterID)}
		}
		if b, err = s.logs.open(s.logs.hostPath(cl.ClusterID, h.ID), h.FileName()); err != nil {
			return nil, err
		}
		if b == nil {
			return nil, &httpError{http.StatusNotFound, fmt.Sprintf("no logs were uploaded for host %s of cluster %s", h.Hostname, cl.ClusterID)}
		}
	case wire.LogsTypeController:
		if b, err = s.logs.open(s.logs.controllerPath(cl.ClusterID), "controller_logs.tar.gz"); err != nil {
			return nil, err
		}
		if b == nil {
			return nil, &httpError{http.StatusNotFound, fmt.Sprintf("no controller logs were uploaded for cluster %s", cl.ClusterID)}
		}
	case wire.LogsTypeAll, "":
		return s.clusterTar(cl)
	default:
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("query logs_type: %q is not host, controller or all", typ)}
	}
	return &download{name: b.name, size: b.size, write: func(w io.Writer) error {
		_, err := io.CopyN(w, b.f, b.size)
		return err
	}, close: b.f.Close}, nil
}

// clusterTar is the download of every bundle of the cluster's current
// hosts and its controller, named <hostname>_<role>_<id>.tar.gz and
// controller_logs.tar.gz inside <cluster>_<id>.tar.
func (s *server) clusterTar(cl *assisted.ClusterLogs) (any, error) {
	var bs []*bundle
	for _, h := range cl.Hosts {
		b, err := s.logs.open(s.logs.hostPath(cl.ClusterID, h.ID), h.FileName())
		if err != nil {
			closeBundles(bs)
			return nil, err
		}
		if b != nil {
			bs = append(bs, b)
		}
	}
	b, err := s.logs.open(s.logs.controllerPath(cl.ClusterID), "controller_logs.tar.gz")
	if err != nil {
		closeBundles(bs)
		return nil, err
	}
	if b != nil {
		bs = append(bs, b)
	}
	if len(bs) == 0 {
		return nil, &httpError{http.StatusNotFound, fmt.Sprintf("no logs were uploaded for cluster %s", cl.ClusterID)}
	}
	now := time.Now()
	return &download{name: cl.FileName(), size: -1,
		write: func(w io.Writer) error { return writeTar(w, bs, now) },
		close: func() error { closeBundles(bs); return nil }}, nil
}
