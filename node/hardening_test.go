package node_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/node"
	"github.com/nodezero/nodezero/wire"
)

// The service's limits, tested over real TCP on loopback against the
// service as `nodezero service` and `nodezero run` start it (Serve), with
// short timeouts so that the slow clients are cut off in seconds.

// closeBound is how long a test waits for the server to close a
// connection it should close: generous, far above the timeouts under
// test, so a loaded CI machine does not fail it.
const closeBound = 60 * time.Second

// testPullSecret is a pull secret of the shape the service accepts.
const testPullSecret = `{"auths":{"registry.example.com:5000":{"auth":"dXNlcjpwYXNz","email":"e2e@example.com"}}}`

// liveService is Serve running in this process.
type liveService struct {
	addr   string // host:port
	url    string // scheme://host:port
	tokens map[auth.Scheme]string
	user   *wire.Client // user token
	agent  *wire.Client // agent token
}

// startServe runs Serve on 127.0.0.1:0 with lim until the test ends.
// opts are added to both clients (a CA for HTTPS).
func startServe(t *testing.T, lim api.Limits, certFile, keyFile string, opts ...wire.ClientOption) *liveService {
	t.Helper()
	dir := t.TempDir()
	m, _, err := auth.LoadOrCreate(filepath.Join(dir, "auth"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- node.Serve(ctx, node.ServiceConfig{
			Dir: dir, Listen: "127.0.0.1:0", PublicKeyPEM: m.PublicKeyPEM, Logger: slog.New(slog.DiscardHandler),
			MonitorInterval: -1, Limits: lim, TLSCertFile: certFile, TLSKeyFile: keyFile,
			Listening: func(a net.Addr) { listening <- a },
		})
	}()
	var addr net.Addr
	select {
	case err := <-served:
		cancel()
		t.Fatalf("serve: %v", err)
	case addr = <-listening:
	}
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	s := &liveService{addr: addr.String(), url: "http://" + addr.String(), tokens: m.Tokens}
	if certFile != "" {
		s.url = "https://" + addr.String()
	}
	if s.user, err = wire.NewClient(s.url, append([]wire.ClientOption{wire.WithUserToken(m.Tokens[auth.User])}, opts...)...); err != nil {
		t.Fatal(err)
	}
	if s.agent, err = wire.NewClient(s.url, append([]wire.ClientOption{wire.WithAgentToken(m.Tokens[auth.Agent])}, opts...)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.user.CloseIdleConnections)
	t.Cleanup(s.agent.CloseIdleConnections)
	return s
}

// testFixture is a cluster with a manifest, its infra-env and one host.
type testFixture struct{ clusterID, infraEnvID, hostID string }

func (s *liveService) fixture(t *testing.T) testFixture {
	t.Helper()
	ctx := context.Background()
	c, err := s.user.RegisterCluster(ctx, wire.ClusterCreateParams{
		Name: "limits", OpenshiftVersion: "4.18", PullSecret: testPullSecret, BaseDNSDomain: "example.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	cid := c.ID
	ie, err := s.user.RegisterInfraEnv(ctx, wire.InfraEnvCreateParams{Name: "limits", PullSecret: testPullSecret, ClusterID: &cid})
	if err != nil {
		t.Fatal(err)
	}
	f := testFixture{clusterID: c.ID, infraEnvID: ie.ID, hostID: uuid.NewString()}
	if _, err := s.agent.RegisterHost(ctx, ie.ID, wire.HostCreateParams{HostID: f.hostID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.user.CreateClusterManifest(ctx, c.ID, wire.CreateManifestParams{FileName: "a.yaml", Content: "a2luZDogQ29uZmlnTWFwCg=="}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f testFixture) path(pattern string) string {
	return strings.NewReplacer("{cluster_id}", f.clusterID, "{infra_env_id}", f.infraEnvID, "{host_id}", f.hostID).Replace(pattern)
}

// state is what the service holds about f, as JSON, and how many events
// it has recorded.
func (s *liveService) state(t *testing.T, f testFixture) []byte {
	t.Helper()
	ctx := context.Background()
	var parts []any
	for _, get := range []func() (any, error){
		func() (any, error) { return s.user.GetCluster(ctx, f.clusterID) },
		func() (any, error) { return s.user.GetInfraEnv(ctx, f.infraEnvID) },
		func() (any, error) { return s.user.ListHosts(ctx, f.infraEnvID) },
		func() (any, error) { return s.user.ListClusterManifests(ctx, f.clusterID) },
		func() (any, error) { return s.user.ListClusters(ctx) },
		func() (any, error) {
			evs, err := s.user.ListEvents(ctx, wire.EventsQuery{ClusterID: f.clusterID})
			return len(evs), err
		},
	} {
		v, err := get()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, v)
	}
	b, err := json.Marshal(parts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exchange writes raw on a new connection and reads one response.
func exchange(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(closeBound))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatalf("write request: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// awaitClose reads c until the server ends the connection. It fails only
// when the server keeps it past closeBound.
func awaitClose(c net.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(closeBound))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("still open after %s: %w", closeBound, err)
	}
	return nil // EOF or a reset: closed by the server
}

// trickle writes data one byte every interval until done or the
// connection fails.
func trickle(c net.Conn, data string, interval time.Duration, done <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for i := 0; ; i = (i + 1) % len(data) {
		if _, err := c.Write([]byte{data[i]}); err != nil {
			return
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// slowLimits cut slow clients off in a second or two.
var slowLimits = api.Limits{
	ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second, MaxWait: 3 * time.Second,
}

// TestSlowClientsKeepServing is the slowloris test: 200 connections that
// send their headers a byte at a time and 40 that send a body a byte at a
// time (half with the agent token, half without). While they hang on, a
// normal client's requests, on new connections and on kept-alive ones,
// all succeed; and the server closes every slow connection.
func TestSlowClientsKeepServing(t *testing.T) {
	t.Parallel()
	s := startServe(t, slowLimits, "", "")
	f := s.fixture(t)
	const slowHeaders, slowBodies = 200, 40

	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, slowHeaders+slowBodies)
	open := func(head, trickled string) {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			errs <- err
			return
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			if head != "" {
				if _, err := io.WriteString(c, head); err != nil {
					return // closed already
				}
			}
			trickle(c, trickled, 300*time.Millisecond, done)
		}()
		go func() {
			defer wg.Done()
			defer c.Close()
			if err := awaitClose(c); err != nil {
				errs <- err
			}
		}()
	}
	for range slowHeaders {
		open("", "GET "+api.Base+"/clusters HTTP/1.1\r\nHost: nodezero\r\nX-Slow: "+strings.Repeat("a", 4096))
	}
	replyPath := f.path(api.Base + "/infra-envs/{infra_env_id}/hosts/{host_id}/instructions")
	for i := range slowBodies {
		auth := ""
		if i%2 == 0 {
			auth = "X-Secret-Key: " + s.tokens["agentAuth"] + "\r\n"
		}
		open("POST "+replyPath+" HTTP/1.1\r\nHost: nodezero\r\nContent-Type: application/json\r\n"+auth+"Content-Length: 100000\r\n\r\n",
			`{"step_id":"inventory","step_type":"inventory","output":"`+strings.Repeat("x", 1000))
	}
	closed := make(chan struct{})
	go func() {
		wg.Wait()
		close(closed)
	}()

	// The normal client, until every slow connection is gone: new
	// connections and kept-alive ones, reads and writes.
	ctx := context.Background()
	calls := 0
	for waiting := true; waiting; calls++ {
		select {
		case <-closed:
			waiting = false
		case <-time.After(50 * time.Millisecond):
		}
		if calls%2 == 0 {
			s.user.CloseIdleConnections()
		}
		if _, err := s.user.ListClusters(ctx); err != nil {
			t.Fatalf("call %d, with slow clients connected: ListClusters: %v", calls, err)
		}
		if _, err := s.user.UpdateHost(ctx, f.infraEnvID, f.hostID, wire.HostUpdateParams{HostName: ptr(fmt.Sprintf("node-%d", calls))}); err != nil {
			t.Fatalf("call %d, with slow clients connected: UpdateHost: %v", calls, err)
		}
	}
	close(done)
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 5 {
			t.Errorf("slow connection: %v", err)
		}
	}
	if n > 5 {
		t.Errorf("... %d slow connections in all", n)
	}
	t.Logf("%d normal calls while %d slow connections hung on", calls, slowHeaders+slowBodies)
}

func ptr[T any](v T) *T { return &v }

// TestLongPollOutlivesReadTimeout: an agent's ?wait= is held past the
// read timeout and answered; the write timeout is above it.
func TestLongPollOutlivesReadTimeout(t *testing.T) {
	t.Parallel()
	s := startServe(t, slowLimits, "", "")
	f := s.fixture(t)
	ctx := context.Background()
	// The first request hands out what is due at registration; the
	// second has nothing due and is held for the whole wait.
	if _, err := s.agent.NextSteps(ctx, f.infraEnvID, f.hostID, 0, slowLimits.MaxWait); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	steps, err := s.agent.NextSteps(ctx, f.infraEnvID, f.hostID, 0, slowLimits.MaxWait)
	if err != nil {
		t.Fatalf("long-poll: %v", err)
	}
	if held := time.Since(start); held < slowLimits.ReadTimeout {
		t.Fatalf("long-poll answered after %s with %d steps: not held past the %s read timeout, the test shows nothing", held, len(steps.Instructions), slowLimits.ReadTimeout)
	}
}

// TestOversizedHeaders: a request line or headers over MaxHeaderBytes get
// 431 and the service goes on.
func TestOversizedHeaders(t *testing.T) {
	t.Parallel()
	lim := slowLimits
	lim.MaxHeaderBytes = 8 << 10
	s := startServe(t, lim, "", "")
	// net/http allows 4 KiB over MaxHeaderBytes.
	big := strings.Repeat("a", 2*lim.MaxHeaderBytes+4096)
	for name, raw := range map[string]string{
		"one large header": "GET " + api.Base + "/clusters HTTP/1.1\r\nHost: nodezero\r\nAuthorization: " + big + "\r\n\r\n",
		"many headers":     "GET " + api.Base + "/clusters HTTP/1.1\r\nHost: nodezero\r\n" + strings.Repeat("X-A: "+strings.Repeat("b", 100)+"\r\n", 300) + "\r\n",
		"long url":         "GET " + api.Base + "/clusters?x=" + big + " HTTP/1.1\r\nHost: nodezero\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := exchange(t, s.addr, raw)
			if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("status %d %s, want 431", resp.StatusCode, body)
			}
			if err := s.user.Health(context.Background()); err != nil {
				t.Errorf("after it: %v", err)
			}
		})
	}
}

// TestOversizedBodies sends every route a Content-Length one byte over its
// limit, without the body: a 413 in assisted's error shape comes back
// before the body is sent, and nothing changed. Bodies without a
// Content-Length are cut off at the limit of each size class.
func TestOversizedBodies(t *testing.T) {
	t.Parallel()
	s := startServe(t, api.Limits{MaxWait: time.Second}, "", "")
	f := s.fixture(t)
	before := s.state(t, f)
	for _, rt := range api.Routes() {
		t.Run(rt.Operation+"/"+rt.Method, func(t *testing.T) {
			head := rt.Method + " " + f.path(rt.Pattern) + " HTTP/1.1\r\nHost: nodezero\r\nContent-Type: application/json\r\n"
			if len(rt.Schemes) > 0 {
				head += rt.Schemes[0].Header() + ": " + s.tokens[rt.Schemes[0]] + "\r\n"
			}
			head += "Content-Length: " + strconv.FormatInt(rt.BodyLimit()+1, 10) + "\r\n\r\n"
			resp, body := exchange(t, s.addr, head)
			checkTooLarge(t, resp.StatusCode, body)
		})
	}
	// One route of each class, the body streamed chunked.
	for _, c := range []struct {
		op, path string
		client   *wire.Client
		limit    int64
	}{
		{"v2RegisterHost", api.Base + "/infra-envs/{infra_env_id}/hosts", s.agent, api.SmallBody},
		{"V2UpdateCluster", api.Base + "/clusters/{cluster_id}", s.user, api.MediumBody},
		{"v2PostStepReply", api.Base + "/infra-envs/{infra_env_id}/hosts/{host_id}/instructions", s.agent, api.DefaultMaxBody},
	} {
		t.Run(c.op+"/chunked", func(t *testing.T) {
			method := map[string]string{"v2RegisterHost": "POST", "V2UpdateCluster": "PATCH", "v2PostStepReply": "POST"}[c.op]
			body := io.MultiReader(strings.NewReader(`{"host_id":"`), strings.NewReader(strings.Repeat(" ", int(c.limit))))
			req, err := http.NewRequest(method, s.url+f.path(c.path), body)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = -1
			if c.client == s.agent {
				req.Header.Set(wire.HeaderAgentToken, s.tokens[auth.Agent])
			} else {
				req.Header.Set(wire.HeaderUserToken, s.tokens[auth.User])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			checkTooLarge(t, resp.StatusCode, b)
		})
	}
	if after := s.state(t, f); !bytes.Equal(after, before) {
		t.Errorf("refused bodies changed the service's state:\nbefore %.3000s\nafter  %.3000s", before, after)
	}
}

func checkTooLarge(t *testing.T, status int, body []byte) {
	t.Helper()
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d %.300s, want 413", status, body)
	}
	var e wire.Error
	if err := json.Unmarshal(body, &e); err != nil || e.Code != "413" || e.Kind != wire.ErrorKindError || !strings.Contains(e.Reason, "larger than") {
		t.Errorf("413 body %s (%v), want assisted's error with a reason saying the body is larger than the limit", body, err)
	}
}

// TestIdleKeepAlivesClosed: connections kept alive after a request, and
// connections that never send one, are closed by the server.
func TestIdleKeepAlivesClosed(t *testing.T) {
	t.Parallel()
	s := startServe(t, slowLimits, "", "")
	const n = 50
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			if i%2 == 0 { // one request, then idle
				if _, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: nodezero\r\n\r\n"); err != nil {
					errs <- err
					return
				}
				br := bufio.NewReader(c)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					errs <- err
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.Close {
					errs <- errors.New("the server did not keep the connection alive: nothing tested")
					return
				}
				c = &bufferedConn{Conn: c, r: br}
			}
			if err := awaitClose(c); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestConnsPerClient: one address gets ConnsPerClient connections, those
// over it are closed at once, another address is served meanwhile, and a
// closed connection frees its slot. Loopback is not counted unless asked.
func TestConnsPerClient(t *testing.T) {
	t.Parallel()
	const limit = 8
	lim := api.Limits{ReadHeaderTimeout: closeBound, MaxWait: time.Second, ConnsPerClient: limit}
	dialFrom := func(t *testing.T, addr, from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// served says whether c answers a request.
	served := func(c net.Conn) bool {
		_ = c.SetDeadline(time.Now().Add(closeBound))
		if _, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: nodezero\r\n\r\n"); err != nil {
			return false
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	open := func(t *testing.T, addr, from string, n int) []net.Conn {
		var cs []net.Conn
		for range n {
			cs = append(cs, dialFrom(t, addr, from))
		}
		t.Cleanup(func() {
			for _, c := range cs {
				c.Close()
			}
		})
		return cs
	}

	t.Run("counted", func(t *testing.T) {
		lim := lim
		lim.LimitLoopback = true
		s := startServe(t, lim, "", "")
		cs := open(t, s.addr, "127.0.0.2", 2*limit)
		for i, c := range cs {
			if got, want := served(c), i < limit; got != want {
				t.Errorf("connection %d from 127.0.0.2 served %v, want %v (limit %d)", i, got, want, limit)
			}
		}
		if err := s.user.Health(context.Background()); err != nil {
			t.Errorf("from 127.0.0.1 while 127.0.0.2 is at its limit: %v", err)
		}
		for _, c := range cs {
			c.Close()
		}
		// The server notices the closes on its own time: a new
		// connection is served once it has.
		deadline := time.Now().Add(closeBound)
		for {
			c := dialFrom(t, s.addr, "127.0.0.2")
			ok := served(c)
			c.Close()
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("127.0.0.2 still refused %s after closing its connections", closeBound)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("loopback not counted", func(t *testing.T) {
		s := startServe(t, lim, "", "")
		for i, c := range open(t, s.addr, "127.0.0.2", 2*limit) {
			if !served(c) {
				t.Errorf("loopback connection %d refused: loopback is not limited by default", i)
			}
		}
	})
}
