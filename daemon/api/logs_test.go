package api_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/hostagent/logsgather"
	"github.com/nodezero/nodezero/wire"
)

// tarGz is a small log bundle: a tar.gz holding one file.
func tarGz(t *testing.T, name, content string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content))}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(tw, content); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// files lists the regular files under dir, relative, sorted; a missing dir
// has none.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return filepath.SkipDir
			}
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	sort.Strings(out)
	return out
}

// untar reads a tar into name → content.
func untar(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("read tar: %v", err)
		}
		c, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("read tar entry %s: %v", hdr.Name, err)
		}
		out[hdr.Name] = c
	}
}

func TestLogsRoundTrip(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	ctx := context.Background()
	c := h.client

	// The agent reports, then uploads as its logs-gather step does.
	if err := c.UpdateHostLogsProgress(ctx, f.infraEnvID, f.hostID, wire.LogsStateRequested); err != nil {
		t.Fatalf("UpdateHostLogsProgress: %v", err)
	}
	hostLogs := tarGz(t, "manifest.txt", "collected: everything\n")
	target := wire.LogsTarget{Type: wire.LogsTypeHost, InfraEnvID: f.infraEnvID, HostID: f.hostID}
	if err := c.UploadLogs(ctx, f.clusterID, target, "logs.tar.gz", bytes.NewReader(hostLogs)); err != nil {
		t.Fatalf("UploadLogs host: %v", err)
	}
	host, err := c.GetHost(ctx, f.infraEnvID, f.hostID)
	if err != nil {
		t.Fatal(err)
	}
	if host.LogsInfo != wire.LogsStateRequested || host.LogsStartedAt.IsZero() || host.LogsCollectedAt.IsZero() {
		t.Errorf("host after upload: logs_info %q started %v collected %v; want requested and both stamped",
			host.LogsInfo, host.LogsStartedAt, host.LogsCollectedAt)
	}
	stored := filepath.Join(h.logsDir, f.clusterID, f.hostID+".tar.gz")
	if b, err := os.ReadFile(stored); err != nil || !bytes.Equal(b, hostLogs) {
		t.Errorf("stored bundle %s: %d bytes, %v; want the %d uploaded", stored, len(b), err, len(hostLogs))
	}

	// One host's bundle, by host_id alone (as assisted reads it) and by type.
	hostName := f.hostID + "_auto-assign_" + f.hostID + ".tar.gz" // no inventory: named by its id
	for _, q := range []string{"host_id=" + f.hostID, "logs_type=host&host_id=" + f.hostID} {
		r := h.user(t, "GET", f.path(clusterPat+"/logs")+"?"+q, "")
		if r.status != http.StatusOK || !bytes.Equal(r.body, hostLogs) {
			t.Fatalf("GET logs?%s = %d, %d bytes; want 200 and the bundle", q, r.status, len(r.body))
		}
		if got, want := r.header.Get("Content-Disposition"), `attachment; filename="`+hostName+`"`; got != want {
			t.Errorf("Content-Disposition = %q, want %q", got, want)
		}
		if r.header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("Content-Type = %q, want application/octet-stream", r.header.Get("Content-Type"))
		}
	}

	// The controller's, then everything as one tar.
	ctrlLogs := tarGz(t, "controller.log", "operators: all available\n")
	if err := c.UploadLogs(ctx, f.clusterID, wire.LogsTarget{Type: wire.LogsTypeController}, "controller.tar.gz", bytes.NewReader(ctrlLogs)); err != nil {
		t.Fatalf("UploadLogs controller: %v", err)
	}
	var all bytes.Buffer
	if err := c.DownloadClusterLogs(ctx, f.clusterID, wire.LogsTarget{}, &all); err != nil {
		t.Fatalf("DownloadClusterLogs: %v", err)
	}
	want := map[string][]byte{hostName: hostLogs, "controller_logs.tar.gz": ctrlLogs}
	if diff := cmp.Diff(want, untar(t, all.Bytes())); diff != "" {
		t.Errorf("cluster tar mismatch (-want +got):\n%s", diff)
	}
	r := h.user(t, "GET", f.path(clusterPat+"/logs")+"?logs_type=all", "")
	if got, want := r.header.Get("Content-Disposition"), `attachment; filename="fixture_`+f.clusterID+`.tar"`; r.status != 200 || got != want {
		t.Errorf("GET logs?logs_type=all = %d, Content-Disposition %q; want 200, %q", r.status, got, want)
	}

	// A second upload replaces the first, and a refused one leaves it.
	newer := tarGz(t, "manifest.txt", "collected: again\n")
	if err := c.UploadLogs(ctx, f.clusterID, target, "logs.tar.gz", bytes.NewReader(newer)); err != nil {
		t.Fatalf("UploadLogs again: %v", err)
	}
	big := bytes.Repeat([]byte{'x'}, testMaxLogsSize+1)
	if err := c.UploadLogs(ctx, f.clusterID, target, "logs.tar.gz", bytes.NewReader(big)); !wire.IsStatus(err, http.StatusRequestEntityTooLarge) {
		t.Errorf("oversized upload = %v, want 413", err)
	}
	var got bytes.Buffer
	if err := c.DownloadClusterLogs(ctx, f.clusterID, target, &got); err != nil || !bytes.Equal(got.Bytes(), newer) {
		t.Errorf("host bundle after a replace and a refused upload: %v, %d bytes; want the second upload", err, got.Len())
	}
	wantFiles := []string{filepath.Join(f.clusterID, "controller.tar.gz"), filepath.Join(f.clusterID, f.hostID+".tar.gz")}
	sort.Strings(wantFiles)
	if diff := cmp.Diff(wantFiles, files(t, h.logsDir)); diff != "" {
		t.Errorf("files in the logs dir (-want +got):\n%s", diff)
	}

	// Logs go with their cluster.
	if _, err := c.GetCluster(ctx, f.clusterID); err != nil {
		t.Fatal(err)
	}
	if r := h.user(t, "DELETE", f.path(clusterPat), ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE cluster = %d %s", r.status, r.body)
	}
	if got := files(t, h.logsDir); len(got) != 0 {
		t.Errorf("files left after the cluster was deleted: %q", got)
	}
}

// multipartBody is a form with the given fields (name → content); a name
// of upfile is sent as a file.
func multipartBody(t *testing.T, fields ...[2]string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, fl := range fields {
		var w io.Writer
		var err error
		if fl[0] == "upfile" {
			w, err = mw.CreateFormFile(fl[0], "logs.tar.gz")
		} else {
			w, err = mw.CreateFormField(fl[0])
		}
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, fl[1])
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), buf.Bytes()
}

// upload posts a raw body to the logs route with the agent token.
func (h *harness) upload(t *testing.T, f fixture, query, contentType string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest("POST", h.srv.URL+f.path(clusterPat+"/logs")+"?"+query, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Secret-Key", h.tokens[auth.Agent])
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("POST logs?%s: %v", query, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func TestLogsUploadRefused(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	other := h.newFixture(t)
	hostQ := "logs_type=host&infra_env_id=" + f.infraEnvID + "&host_id=" + f.hostID
	formCT, form := multipartBody(t, [2]string{"upfile", "bundle"})
	noFileCT, noFile := multipartBody(t, [2]string{"note", "no file here"})
	emptyCT, empty := multipartBody(t, [2]string{"upfile", ""})
	bigCT, big := multipartBody(t, [2]string{"upfile", strings.Repeat("x", testMaxLogsSize+1)})
	padCT, pad := multipartBody(t, [2]string{"padding", strings.Repeat("x", 2*testMaxLogsSize)}, [2]string{"upfile", "bundle"})
	cut := []byte("--b\r\nContent-Disposition: form-data; name=\"upfile\"; filename=\"x\"\r\n\r\nthe bundle, cut off")

	cases := []struct {
		name, query, ct string
		body            []byte
		want            int
		reason          []string
	}{
		{"json body", hostQ, "application/json", []byte(`{}`), 400, []string{"multipart/form-data", "upfile"}},
		{"no upfile", hostQ, noFileCT, noFile, 400, []string{"no field upfile"}},
		{"cut off", hostQ, "multipart/form-data; boundary=b", cut, 400, []string{"malformed multipart"}},
		{"empty file", hostQ, emptyCT, empty, 400, []string{"upfile", "empty"}},
		{"file too large", hostQ, bigCT, big, 413, []string{"upfile", "larger than"}},
		{"body too large", hostQ, padCT, pad, 413, []string{"larger than"}},
		{"no logs_type", "infra_env_id=" + f.infraEnvID + "&host_id=" + f.hostID, formCT, form, 400, []string{"logs_type", "required"}},
		{"bad logs_type", "logs_type=all", formCT, form, 400, []string{"logs_type", `"all"`}},
		{"no host_id", "logs_type=host&infra_env_id=" + f.infraEnvID, formCT, form, 400, []string{"host_id"}},
		{"host id not a uuid", "logs_type=host&infra_env_id=" + f.infraEnvID + "&host_id=h1", formCT, form, 400, []string{"host_id"}},
		{"host of another cluster", "logs_type=host&infra_env_id=" + other.infraEnvID + "&host_id=" + other.hostID, formCT, form, 404,
			[]string{"not a host of cluster " + f.clusterID}},
		{"unknown host", "logs_type=host&infra_env_id=" + f.infraEnvID + "&host_id=" + uuid.NewString(), formCT, form, 404, []string{"not found"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.upload(t, f, c.query, c.ct, c.body)
			if r.status != c.want {
				t.Fatalf("POST logs = %d %s, want %d", r.status, r.body, c.want)
			}
			reason := checkErrorBody(t, r.status, r.header, r.body)
			for _, w := range c.reason {
				if !strings.Contains(reason, w) {
					t.Errorf("reason %q does not mention %q", reason, w)
				}
			}
			if got := files(t, h.logsDir); len(got) != 0 {
				t.Errorf("files left by a refused upload: %q", got)
			}
		})
	}
	if host, _ := h.client.GetHost(context.Background(), f.infraEnvID, f.hostID); host == nil || !host.LogsCollectedAt.IsZero() {
		t.Errorf("refused uploads stamped logs_collected_at: %+v", host)
	}
	// The control: the same form to the right host is stored.
	if r := h.upload(t, f, hostQ, formCT, form); r.status != http.StatusNoContent {
		t.Errorf("POST logs = %d %s, want 204", r.status, r.body)
	}
	// A user may download, not upload.
	r := h.do(t, "POST", f.path(clusterPat+"/logs")+"?"+hostQ, "", map[string]string{"Authorization": h.tokens[auth.User]})
	if r.status != http.StatusForbidden {
		t.Errorf("POST logs with the user token = %d, want 403", r.status)
	}
}

func TestLogsDownloadRefused(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	other := h.newFixture(t)
	for _, c := range []struct {
		name, query string
		want        int
		reason      string
	}{
		{"nothing uploaded", "", 404, "no logs were uploaded for cluster " + f.clusterID},
		{"nothing for the host", "host_id=" + f.hostID, 404, "no logs were uploaded for host"},
		{"no controller logs", "logs_type=controller", 404, "no controller logs"},
		{"host of another cluster", "logs_type=host&host_id=" + other.hostID, 404, "not a host of cluster"},
		{"host type without id", "logs_type=host", 400, "host_id"},
		{"bad type", "logs_type=node-boot", 400, `"node-boot" is not host, controller or all`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.user(t, "GET", f.path(clusterPat+"/logs")+"?"+c.query, "")
			if r.status != c.want {
				t.Fatalf("GET logs?%s = %d %s, want %d", c.query, r.status, r.body, c.want)
			}
			if reason := checkErrorBody(t, r.status, r.header, r.body); !strings.Contains(reason, c.reason) {
				t.Errorf("reason %q does not mention %q", reason, c.reason)
			}
		})
	}
	if r := h.user(t, "GET", b+"/clusters/"+uuid.NewString()+"/logs", ""); r.status != http.StatusNotFound {
		t.Errorf("GET logs of an unknown cluster = %d, want 404", r.status)
	}
}

// TestLogsProgressOverHTTP: the states the route takes and what it refuses.
func TestLogsProgressOverHTTP(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	for _, st := range []string{"requested", "collecting", "completed"} {
		if r := h.agent(t, "PUT", f.path(hostPat+"/logs-progress"), `{"logs_state":"`+st+`"}`); r.status != http.StatusNoContent || len(r.body) != 0 {
			t.Errorf("PUT logs-progress %s = %d %q, want 204 without a body", st, r.status, r.body)
		}
		host, err := h.client.GetHost(context.Background(), f.infraEnvID, f.hostID)
		if err != nil || string(host.LogsInfo) != st {
			t.Errorf("after %s: logs_info %v, %v", st, host, err)
		}
	}
	for _, body := range []string{`{"logs_state":"timeout"}`, `{"logs_state":""}`, `{}`, `{"logs_state":"finished"}`} {
		r := h.agent(t, "PUT", f.path(hostPat+"/logs-progress"), body)
		if r.status != http.StatusBadRequest {
			t.Fatalf("PUT logs-progress %s = %d %s, want 400", body, r.status, r.body)
		}
		if reason := checkErrorBody(t, r.status, r.header, r.body); !strings.Contains(reason, "logs_state") || !strings.Contains(reason, "requested, collecting, completed") {
			t.Errorf("reason %q does not name logs_state and its values", reason)
		}
	}
}

// TestInstallDropsOldLogs: an installation starts without the logs of an
// earlier attempt, as assisted deletes them when it starts one.
func TestInstallDropsOldLogs(t *testing.T) {
	h := newHarness(t)
	f := h.newReadySNO(t)
	target := wire.LogsTarget{Type: wire.LogsTypeHost, InfraEnvID: f.infraEnvID, HostID: f.hostID}
	if err := h.client.UploadLogs(context.Background(), f.clusterID, target, "logs.tar.gz", bytes.NewReader(tarGz(t, "a", "b"))); err != nil {
		t.Fatalf("UploadLogs: %v", err)
	}
	if got := files(t, h.logsDir); len(got) != 1 {
		t.Fatalf("files after the upload: %q, want one", got)
	}
	if r := h.user(t, "POST", f.path(clusterPat+"/actions/install"), ""); r.status != http.StatusAccepted {
		t.Fatalf("install = %d %s, want 202", r.status, r.body)
	}
	if got := files(t, h.logsDir); len(got) != 0 {
		t.Errorf("files after the installation started: %q, want none", got)
	}
}

// TestLogsGatherStepEndToEnd runs the agent's logs-gather step against
// this service: the bundle it builds is stored, stamped and downloadable.
// (A host cannot reach error through this build's API alone: the
// installation's ignition step comes with issue #6. The service's tests
// drive that part.)
func TestLogsGatherStepEndToEnd(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	ctx := context.Background()
	args := []string{wire.MustEncodeEmbedded(wire.LogsGatherCmdRequest{
		ClusterID: f.clusterID, InfraEnvID: f.infraEnvID, HostID: f.hostID, InstallerGather: true})}
	step := logsgather.Step(logsgather.Options{Service: h.client, Root: t.TempDir(), TempDir: t.TempDir()})
	if _, stderr, code := step(ctx, args); code != 0 {
		t.Fatalf("logs-gather = %q, %d; want 0", stderr, code)
	}
	host, err := h.client.GetHost(ctx, f.infraEnvID, f.hostID)
	if err != nil {
		t.Fatal(err)
	}
	if host.LogsInfo != wire.LogsStateCompleted || host.LogsStartedAt.IsZero() || host.LogsCollectedAt.IsZero() {
		t.Errorf("host after logs-gather: logs_info %q started %v collected %v; want completed, both stamped",
			host.LogsInfo, host.LogsStartedAt, host.LogsCollectedAt)
	}
	var got bytes.Buffer
	if err := h.client.DownloadClusterLogs(ctx, f.clusterID, wire.LogsTarget{Type: wire.LogsTypeHost, HostID: f.hostID}, &got); err != nil {
		t.Fatalf("DownloadClusterLogs: %v", err)
	}
	zr, err := gzip.NewReader(&got)
	if err != nil {
		t.Fatalf("downloaded bundle: %v", err)
	}
	names := untar(t, mustReadAll(t, zr))
	if _, ok := names["logs_host_"+f.hostID+"/manifest.txt"]; !ok {
		t.Errorf("downloaded bundle holds %v, no manifest.txt", mapKeys(names))
	}
}

func mustReadAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
