package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUpdateHostLogsProgressWire(t *testing.T) {
	rec, srv := newServer(t, http.StatusNoContent, "")
	c := newTestClient(t, srv.URL, WithAgentToken(testToken))
	if err := c.UpdateHostLogsProgress(context.Background(), testInfraEnv, testHost, LogsStateCollecting); err != nil {
		t.Fatalf("UpdateHostLogsProgress = %v", err)
	}
	req := rec.last(t)
	want := "/api/assisted-install/v2/infra-envs/" + testInfraEnv + "/hosts/" + testHost + "/logs-progress"
	if req.Method != http.MethodPut || req.Path != want {
		t.Errorf("request = %s %s, want PUT %s", req.Method, req.Path, want)
	}
	if got := string(req.Body); got != `{"logs_state":"collecting"}` {
		t.Errorf("body = %s, want {\"logs_state\":\"collecting\"}", got)
	}
	if req.Header.Get(HeaderAgentToken) != testToken {
		t.Errorf("X-Secret-Key = %q, want the agent token", req.Header.Get(HeaderAgentToken))
	}
}

func TestUploadLogsWire(t *testing.T) {
	rec, srv := newServer(t, http.StatusNoContent, "")
	c := newTestClient(t, srv.URL, WithAgentToken(testToken))
	bundle := bytes.Repeat([]byte("log line\n"), 10000)
	target := LogsTarget{Type: LogsTypeHost, InfraEnvID: testInfraEnv, HostID: testHost}
	if err := c.UploadLogs(context.Background(), testCluster, target, "logs.tar.gz", bytes.NewReader(bundle)); err != nil {
		t.Fatalf("UploadLogs = %v", err)
	}
	req := rec.last(t)
	if want := "/api/assisted-install/v2/clusters/" + testCluster + "/logs"; req.Method != http.MethodPost || req.Path != want {
		t.Errorf("request = %s %s, want POST %s", req.Method, req.Path, want)
	}
	q, _ := url.ParseQuery(req.RawQuery)
	if diff := cmp.Diff(url.Values{"logs_type": {"host"}, "infra_env_id": {testInfraEnv}, "host_id": {testHost}}, q); diff != "" {
		t.Errorf("query mismatch (-want +got):\n%s", diff)
	}
	mt, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("Content-Type %q: %v, want multipart/form-data", req.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(bytes.NewReader(req.Body), params["boundary"])
	part, err := mr.NextPart()
	if err != nil {
		t.Fatalf("first part: %v", err)
	}
	if part.FormName() != "upfile" || part.FileName() != "logs.tar.gz" {
		t.Errorf("part %q file %q, want upfile logs.tar.gz", part.FormName(), part.FileName())
	}
	got, _ := io.ReadAll(part)
	if !bytes.Equal(got, bundle) {
		t.Errorf("uploaded %d bytes, want the %d of the bundle", len(got), len(bundle))
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("after upfile: %v, want no more parts", err)
	}
}

// errReader fails after giving n bytes.
type errReader struct{ n int }

var errDisk = errors.New("disk read error")

func (r *errReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errDisk
	}
	n := min(len(p), r.n)
	r.n -= n
	return n, nil
}

func TestUploadLogsErrors(t *testing.T) {
	// The service refuses: an APIError with its status.
	_, srv := newServer(t, http.StatusRequestEntityTooLarge, `{"code":"413","href":"","id":413,"kind":"Error","reason":"log file is larger than 10 bytes"}`)
	c := newTestClient(t, srv.URL)
	err := c.UploadLogs(context.Background(), testCluster, LogsTarget{Type: LogsTypeController}, "c.tar.gz", strings.NewReader(strings.Repeat("x", 1<<20)))
	if !IsStatus(err, http.StatusRequestEntityTooLarge) {
		t.Errorf("refused upload = %v, want a 413 APIError", err)
	}
	// The file cannot be read: the request fails with the read error.
	_, srv = newServer(t, http.StatusNoContent, "")
	c = newTestClient(t, srv.URL)
	err = c.UploadLogs(context.Background(), testCluster, LogsTarget{Type: LogsTypeController}, "c.tar.gz", &errReader{n: 100})
	if !errors.Is(err, errDisk) {
		t.Errorf("upload of an unreadable file = %v, want the read error", err)
	}
}

func TestDownloadClusterLogs(t *testing.T) {
	rec, srv := newServer(t, http.StatusOK, "tarball bytes")
	c := newTestClient(t, srv.URL, WithUserToken("tok"))
	var buf bytes.Buffer
	if err := c.DownloadClusterLogs(context.Background(), testCluster, LogsTarget{Type: LogsTypeHost, HostID: testHost}, &buf); err != nil {
		t.Fatalf("DownloadClusterLogs = %v", err)
	}
	if buf.String() != "tarball bytes" {
		t.Errorf("downloaded %q, want the body as sent", buf.String())
	}
	req := rec.last(t)
	q, _ := url.ParseQuery(req.RawQuery)
	if diff := cmp.Diff(url.Values{"logs_type": {"host"}, "host_id": {testHost}}, q); diff != "" {
		t.Errorf("query mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(req.Header.Get("Accept"), "application/octet-stream") {
		t.Errorf("Accept = %q, want application/octet-stream", req.Header.Get("Accept"))
	}

	_, srv = newServer(t, http.StatusNotFound, `{"code":"404","href":"","id":404,"kind":"Error","reason":"no logs"}`)
	c = newTestClient(t, srv.URL)
	buf.Reset()
	err := c.DownloadClusterLogs(context.Background(), testCluster, LogsTarget{}, &buf)
	if !IsStatus(err, http.StatusNotFound) || buf.Len() != 0 {
		t.Errorf("download of nothing = %q, %v; want nothing and a 404 APIError", buf.String(), err)
	}
}
