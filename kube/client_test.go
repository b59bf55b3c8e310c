package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeAPI is a few of kube-apiserver's answers for the two resources, kept
// in memory: enough to pin the client's requests and its error mapping.
// kube/localapi's tests run the same calls against the real API server.
type fakeAPI struct {
	mu      sync.Mutex
	objects map[string]map[string]any // path of the object → its JSON
	rv      int
	users   []string // client certificates' CNs, one a request
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "message": msg, "code": code})
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(r.TLS.PeerCertificates) > 0 {
		f.users = append(f.users, r.TLS.PeerCertificates[0].Subject.CommonName)
	}
	const prefix = "/apis/config.openshift.io/v1/"
	if r.URL.Path == "/readyz" {
		fmt.Fprint(w, "ok")
		return
	}
	if r.URL.Path == "/denied" {
		status(w, 403, "Forbidden", `clusterversions.config.openshift.io is forbidden: User "x" cannot list`)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok {
		status(w, 404, "NotFound", "the server could not find the requested resource")
		return
	}
	parts := strings.Split(rest, "/")
	resource := parts[0]
	switch {
	case len(parts) == 1 && r.Method == http.MethodGet:
		var items []any
		for p, o := range f.objects {
			if strings.HasPrefix(p, resource+"/") {
				items = append(items, o)
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"kind": "List", "items": items})
	case len(parts) == 1 && r.Method == http.MethodPost:
		var o map[string]any
		json.NewDecoder(r.Body).Decode(&o)
		meta := o["metadata"].(map[string]any)
		key := resource + "/" + meta["name"].(string)
		if _, ok := f.objects[key]; ok {
			status(w, 409, "AlreadyExists", resource+` "`+meta["name"].(string)+`" already exists`)
			return
		}
		f.rv++
		meta["resourceVersion"] = strconv.Itoa(f.rv)
		delete(o, "status") // the status subresource: create drops it
		f.objects[key] = o
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(o)
	case len(parts) == 2 && r.Method == http.MethodGet:
		o, ok := f.objects[resource+"/"+parts[1]]
		if !ok {
			status(w, 404, "NotFound", resource+` "`+parts[1]+`" not found`)
			return
		}
		json.NewEncoder(w).Encode(o)
	case len(parts) == 3 && parts[2] == "status" && r.Method == http.MethodPut:
		key := resource + "/" + parts[1]
		cur, ok := f.objects[key]
		if !ok {
			status(w, 404, "NotFound", resource+` "`+parts[1]+`" not found`)
			return
		}
		var o map[string]any
		json.NewDecoder(r.Body).Decode(&o)
		if o["metadata"].(map[string]any)["resourceVersion"] != cur["metadata"].(map[string]any)["resourceVersion"] {
			status(w, 409, "Conflict", "the object has been modified; please apply your changes to the latest version and try again")
			return
		}
		f.rv++
		cur["status"] = o["status"]
		cur["metadata"].(map[string]any)["resourceVersion"] = strconv.Itoa(f.rv)
		json.NewEncoder(w).Encode(cur)
	default:
		status(w, 405, "MethodNotAllowed", "not allowed")
	}
}

// startFake serves fakeAPI over TLS for the name api.test and 127.0.0.1,
// asking for a client certificate of clientCA.
func startFake(t *testing.T, serving, clientCA *testCA) (*httptest.Server, *fakeAPI) {
	t.Helper()
	f := &fakeAPI{objects: map[string]map[string]any{}}
	srv := httptest.NewUnstartedServer(f)
	cert, key := serving.issue(t, "api", nil, []string{"api.test"}, nil)
	kp, err := tls.X509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(clientCA.PEM)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{kp}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, f
}

func TestClient(t *testing.T) {
	ctx := context.Background()
	serving, clients := newTestCA(t, "serving"), newTestCA(t, "clients")
	srv, fake := startFake(t, serving, clients)
	cert, key := clients.issue(t, "system:admin", []string{"system:masters"}, nil, nil)
	// The server's certificate names api.test only: tls-server-name is
	// what lets the client reach it at 127.0.0.1.
	cfg := &Config{Server: srv.URL, TLSServerName: "api.test", CAData: serving.PEM, CertData: cert, KeyData: key}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ready(ctx); err != nil {
		t.Fatalf("Ready: %v", err)
	}

	if _, err := c.GetClusterVersion(ctx, ClusterVersionName); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetClusterVersion before it exists = %v, want ErrNotFound", err)
	}
	cv, err := c.CreateClusterVersion(ctx, &ClusterVersion{Metadata: ObjectMeta{Name: ClusterVersionName}, Spec: ClusterVersionSpec{ClusterID: "c1"},
		Status: ClusterVersionStatus{Desired: Release{Version: "dropped"}}})
	if err != nil {
		t.Fatal(err)
	}
	if cv.Status.Desired.Version != "" || cv.Spec.ClusterID != "c1" || cv.Metadata.ResourceVersion == "" {
		t.Errorf("created %+v: want the spec kept, no status, a resourceVersion", cv)
	}
	if _, err := c.CreateClusterVersion(ctx, &ClusterVersion{Metadata: ObjectMeta{Name: ClusterVersionName}}); !errors.Is(err, ErrAlreadyExists) || errors.Is(err, ErrConflict) {
		t.Errorf("second create = %v, want ErrAlreadyExists only", err)
	}

	stale := *cv
	SetCondition(&cv.Status.Conditions, Condition{Type: Available, Status: True, Reason: "Done", Message: "Done applying 4.18.0"})
	SetCondition(&cv.Status.Conditions, Condition{Type: Progressing, Status: False, Message: "Cluster version is 4.18.0"})
	SetCondition(&cv.Status.Conditions, Condition{Type: Failing, Status: False})
	cv.Status.History = []UpdateHistory{{State: UpdateCompleted, Version: "4.18.0", Image: "r/x:1", StartedTime: Now(), CompletionTime: &Time{Now().Time}}}
	updated, err := c.UpdateClusterVersionStatus(ctx, cv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateClusterVersionStatus(ctx, &stale); !errors.Is(err, ErrConflict) {
		t.Errorf("status update with a stale resourceVersion = %v, want ErrConflict", err)
	}
	got, err := c.GetClusterVersion(ctx, ClusterVersionName)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(updated, got); d != "" {
		t.Errorf("read back (-updated +read):\n%s", d)
	}
	if !got.Installed() || got.CompletedVersion() != "4.18.0" || got.Summary() != "4.18.0: Cluster version is 4.18.0" {
		t.Errorf("read back: Installed %v, CompletedVersion %q, Summary %q", got.Installed(), got.CompletedVersion(), got.Summary())
	}

	for _, name := range []string{"kube-apiserver", "etcd"} {
		co, err := c.CreateClusterOperator(ctx, &ClusterOperator{Metadata: ObjectMeta{Name: name}})
		if err != nil {
			t.Fatal(err)
		}
		co.Status.Versions = []OperandVersion{{Name: "operator", Version: "4.18.0"}}
		SetCondition(&co.Status.Conditions, Condition{Type: Available, Status: True})
		if _, err := c.UpdateClusterOperatorStatus(ctx, co); err != nil {
			t.Fatal(err)
		}
	}
	cos, err := c.ListClusterOperators(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cos) != 2 || cos[0].Version() != "4.18.0" || !IsTrue(cos[1].Status.Conditions, Available) {
		t.Errorf("ListClusterOperators = %+v, want two, at 4.18.0 and Available", cos)
	}
	if co, err := c.GetClusterOperator(ctx, "etcd"); err != nil || co.Metadata.Name != "etcd" {
		t.Errorf("GetClusterOperator(etcd) = %+v, %v", co, err)
	}

	err = c.Do(ctx, http.MethodGet, "/denied", nil, nil)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, ErrForbidden) || apiErr.Reason != "Forbidden" || !strings.Contains(err.Error(), "cannot list") {
		t.Errorf("a 403 = %v, want an *APIError with the Status' reason and message", err)
	}

	fake.mu.Lock()
	defer fake.mu.Unlock()
	for _, u := range fake.users {
		if u != "system:admin" {
			t.Errorf("a request came as %q, want system:admin", u)
		}
	}
}

func TestClientRefusesAnotherServer(t *testing.T) {
	serving, other, clients := newTestCA(t, "serving"), newTestCA(t, "other"), newTestCA(t, "clients")
	srv, _ := startFake(t, serving, clients)
	cert, key := clients.issue(t, "system:admin", nil, nil, nil)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"another CA", Config{Server: srv.URL, TLSServerName: "api.test", CAData: other.PEM, CertData: cert, KeyData: key}},
		{"another name", Config{Server: srv.URL, TLSServerName: "api.elsewhere.test", CAData: serving.PEM, CertData: cert, KeyData: key}},
		{"the address, which the certificate does not name", Config{Server: srv.URL, CAData: serving.PEM, CertData: cert, KeyData: key}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(&tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = c.Ready(context.Background())
			var ce *tls.CertificateVerificationError
			if !errors.As(err, &ce) {
				t.Errorf("Ready = %v, want a certificate verification error", err)
			}
		})
	}
}
