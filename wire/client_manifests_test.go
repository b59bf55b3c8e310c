package wire

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestManifestEndpoints(t *testing.T) {
	ctx := context.Background()
	api := "/api/assisted-install/v2/clusters/" + testCluster
	content := "a2luZDogQ29uZmlnTWFwCg=="
	tests := []struct {
		name         string
		status       int
		body         string
		call         func(c *Client) error
		method, path string
		query        url.Values
		wantBody     string // the request body, "" = none
	}{
		{"UpdateClusterInstallConfig", 201, ``, func(c *Client) error {
			return c.UpdateClusterInstallConfig(ctx, testCluster, `{"fips":true}`)
		}, "PATCH", api + "/install-config", nil, `"{\"fips\":true}"`},
		{"CreateClusterManifest", 201, `{"folder":"openshift","file_name":"a.yaml","manifest_source":"user"}`, func(c *Client) error {
			m, err := c.CreateClusterManifest(ctx, testCluster, CreateManifestParams{Folder: ManifestFolderOpenshift, FileName: "a.yaml", Content: content})
			if err == nil && (m.Folder != ManifestFolderOpenshift || m.FileName != "a.yaml" || m.ManifestSource != ManifestSourceUser) {
				t.Errorf("CreateClusterManifest = %+v, want the answer decoded", m)
			}
			return err
		}, "POST", api + "/manifests", nil, `{"folder":"openshift","file_name":"a.yaml","content":"` + content + `"}`},
		{"CreateClusterManifest default folder", 201, `{}`, func(c *Client) error {
			_, err := c.CreateClusterManifest(ctx, testCluster, CreateManifestParams{FileName: "a.yaml", Content: content})
			return err
		}, "POST", api + "/manifests", nil, `{"file_name":"a.yaml","content":"` + content + `"}`},
		{"ListClusterManifests", 200, `[{"folder":"manifests","file_name":"a.yaml"}]`, func(c *Client) error {
			l, err := c.ListClusterManifests(ctx, testCluster)
			if err == nil && (len(l) != 1 || l[0].FileName != "a.yaml") {
				t.Errorf("ListClusterManifests = %v, want the one listed", l)
			}
			return err
		}, "GET", api + "/manifests", nil, ``},
		{"UpdateClusterManifest", 200, `{}`, func(c *Client) error {
			name := "b.yaml"
			_, err := c.UpdateClusterManifest(ctx, testCluster, UpdateManifestParams{Folder: ManifestFolderManifests, FileName: "a.yaml", UpdatedFileName: &name})
			return err
		}, "PATCH", api + "/manifests", nil, `{"folder":"manifests","file_name":"a.yaml","updated_file_name":"b.yaml"}`},
		{"DeleteClusterManifest", 200, ``, func(c *Client) error {
			return c.DeleteClusterManifest(ctx, testCluster, ManifestFolderOpenshift, "a b.yaml")
		}, "DELETE", api + "/manifests", url.Values{"folder": {"openshift"}, "file_name": {"a b.yaml"}}, ``},
		{"DeleteClusterManifest default folder", 200, ``, func(c *Client) error {
			return c.DeleteClusterManifest(ctx, testCluster, "", "a.yaml")
		}, "DELETE", api + "/manifests", url.Values{"file_name": {"a.yaml"}}, ``},
		{"DownloadClusterManifest", 200, "kind: ConfigMap\n", func(c *Client) error {
			b, err := c.DownloadClusterManifest(ctx, testCluster, ManifestFolderOpenshift, "a.yaml")
			if err == nil && string(b) != "kind: ConfigMap\n" {
				t.Errorf("DownloadClusterManifest = %q, want the body as sent", b)
			}
			return err
		}, "GET", api + "/manifests/files", url.Values{"folder": {"openshift"}, "file_name": {"a.yaml"}}, ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, srv := newServer(t, tc.status, tc.body)
			c := newTestClient(t, srv.URL, WithUserToken("tok"))
			if err := tc.call(c); err != nil {
				t.Fatalf("call = %v", err)
			}
			req := rec.last(t)
			if req.Method != tc.method || req.Path != tc.path {
				t.Errorf("request = %s %s, want %s %s", req.Method, req.Path, tc.method, tc.path)
			}
			q, _ := url.ParseQuery(req.RawQuery)
			if len(q) == 0 {
				q = nil
			}
			if diff := cmp.Diff(tc.query, q); diff != "" {
				t.Errorf("query mismatch (-want +got):\n%s", diff)
			}
			if got := string(req.Body); got != tc.wantBody {
				t.Errorf("request body = %s, want %s", got, tc.wantBody)
			}
			if tc.wantBody != "" && !json.Valid(req.Body) {
				t.Errorf("request body %s is not JSON", req.Body)
			}
		})
	}
}

func TestDownloadClusterManifestError(t *testing.T) {
	_, srv := newServer(t, http.StatusNotFound, `{"code":"404","href":"","id":404,"kind":"Error","reason":"Cluster manifest openshift/a.yaml doesn't exist"}`)
	c := newTestClient(t, srv.URL)
	b, err := c.DownloadClusterManifest(context.Background(), testCluster, ManifestFolderOpenshift, "a.yaml")
	if !IsStatus(err, http.StatusNotFound) || b != nil {
		t.Errorf("DownloadClusterManifest of a missing file = %q, %v; want nil and a 404 APIError", b, err)
	}
}
