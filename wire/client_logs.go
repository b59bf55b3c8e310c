package wire

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"time"
)

// Log collection: the agent's progress reports and uploads (agentAuth) and
// the user's downloads (userAuth), per the swagger's
// v2UpdateHostLogsProgress, V2UploadLogs and V2DownloadClusterLogs.

// LogsUploadField is the multipart field V2UploadLogs reads the file from.
const LogsUploadField = "upfile"

// transferTimeout is added to the request timeout of an upload or a
// download: a bundle of hundreds of MiB outlasts DefaultRequestTimeout on
// a slow link.
const transferTimeout = 15 * time.Minute

// LogsTarget says whose logs an upload or a download is: a host
// (LogsTypeHost, with HostID and, for uploads, InfraEnvID), the cluster's
// controller, or for downloads everything (LogsTypeAll, or the zero value
// with no HostID).
type LogsTarget struct {
	Type       LogsType
	InfraEnvID string
	HostID     string
}

func (t LogsTarget) values() url.Values {
	v := url.Values{}
	if t.Type != "" {
		v.Set("logs_type", string(t.Type))
	}
	if t.InfraEnvID != "" {
		v.Set("infra_env_id", t.InfraEnvID)
	}
	if t.HostID != "" {
		v.Set("host_id", t.HostID)
	}
	return v
}

// UpdateHostLogsProgress reports a host's log collection state
// (v2UpdateHostLogsProgress, 204).
func (c *Client) UpdateHostLogsProgress(ctx context.Context, infraEnvID, hostID string, state LogsState) error {
	err := c.do(ctx, call{method: http.MethodPut, path: p("/infra-envs/%s/hosts/%s/logs-progress", infraEnvID, hostID),
		body: LogsProgressParams{LogsState: state}})
	if err != nil {
		return fmt.Errorf("update host logs progress %s: %w", state, err)
	}
	return nil
}

// UploadLogs uploads a log bundle (V2UploadLogs, 204): file is streamed as
// multipart field "upfile" named fileName, as the agent's logs_sender sends
// logs.tar.gz.
func (c *Client) UploadLogs(ctx context.Context, clusterID string, t LogsTarget, fileName string, file io.Reader) error {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	done := make(chan struct{})
	go func() {
		defer close(done)
		part, err := mw.CreateFormFile(LogsUploadField, fileName)
		if err == nil {
			_, err = io.Copy(part, file)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err) // nil: EOF for the reader
	}()
	err := c.do(ctx, call{method: http.MethodPost, path: p("/clusters/%s/logs", clusterID), query: t.values(),
		rawBody: pr, contentType: mw.FormDataContentType(), extra: transferTimeout})
	// A request that ended early (refused, cancelled) leaves the writer
	// blocked on the pipe: unblock it, and do not return while it still
	// reads file.
	pr.CloseWithError(io.ErrClosedPipe)
	<-done
	if err != nil {
		return fmt.Errorf("upload logs: %w", err)
	}
	return nil
}

// DownloadClusterLogs writes a cluster's logs to w (V2DownloadClusterLogs,
// application/octet-stream): one host's bundle (LogsTypeHost with HostID),
// the controller's, or a tar of every bundle stored for the cluster.
// Nothing has been uploaded yet is a 404.
func (c *Client) DownloadClusterLogs(ctx context.Context, clusterID string, t LogsTarget, w io.Writer) error {
	err := c.do(ctx, call{method: http.MethodGet, path: p("/clusters/%s/logs", clusterID), query: t.values(),
		outWriter: w, extra: transferTimeout})
	if err != nil {
		return fmt.Errorf("download cluster logs: %w", err)
	}
	return nil
}
