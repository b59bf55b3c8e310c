package imagecheck

import (
	"bytes"
	"context"
	"fmt"
	"github.com/nodezero/nodezero/testbed"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// startDockerRegistry runs Debian's docker-registry (distribution) on a
// free 127.0.0.1 port with its storage in a temp dir. stop ends it.
func startDockerRegistry(t *testing.T) (host string, stop func()) {
	t.Helper()
	bin := needTool(t, "docker-registry")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host = l.Addr().String()
	l.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.yml")
	text := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), host)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	var outMu sync.Mutex
	cmd := exec.CommandContext(ctx, bin, "serve", conf)
	w := lockedWriter{&outMu, &out}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start docker-registry: %v", err)
	}
	var wg sync.WaitGroup
	exited := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(exited)
		_ = cmd.Wait() // killed by cancel in stop
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			outMu.Lock()
			t.Logf("docker-registry output:\n%s", out.String())
			outMu.Unlock()
		}
	})
	deadline := time.After(time.Minute) // bounds a hang only
	for {
		resp, err := http.Get("http://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return host, stop
			}
		}
		select {
		case <-exited:
			t.Fatal("docker-registry exited")
		case <-deadline:
			t.Fatalf("docker-registry never answered: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// push uploads im to the registry with plain HTTP: each blob in one PUT
// after a POST opens the upload, then the manifest.
func push(t *testing.T, host, repo, tag string, im testImage) {
	t.Helper()
	base := "http://" + host
	for d, b := range im.blobs {
		resp, err := http.Post(base+"/v2/"+repo+"/blobs/uploads/", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("start upload: %s", resp.Status)
		}
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		loc = resp.Request.URL.ResolveReference(loc)
		q := loc.Query()
		q.Set("digest", d)
		loc.RawQuery = q.Encode()
		put(t, loc.String(), "application/octet-stream", b)
	}
	put(t, base+"/v2/"+repo+"/manifests/"+tag, mediaDockerManifest, im.manifest)
}

func put(t *testing.T, u, contentType string, body []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		t.Fatalf("PUT %s: %s %s", u, resp.Status, strings.TrimSpace(b.String()))
	}
}

func TestStepDockerRegistry(t *testing.T) {
	host, stop := startDockerRegistry(t)
	im := makeImage(t, "first layer", strings.Repeat("second layer ", 4096))
	push(t, host, "ocp/release", "4.18", im)
	name := host + "/ocp/release:4.18"
	opts := Options{Insecure: []string{host}}

	resp, code := runStep(t, opts, name, host+"/ocp/release@"+digestOf(im.manifest))
	if code != 0 {
		t.Fatalf("step exit %d: %+v", code, resp)
	}
	checkSuccess(t, resp.Images[0], name, im.size)
	checkSuccess(t, resp.Images[1], host+"/ocp/release@"+digestOf(im.manifest), im.size)

	stop()
	resp, code = runStep(t, opts, name)
	if code != exitSomeFailed || len(resp.Images) != 1 || resp.Images[0].Result != v2.ContainerImageAvailabilityResultFailure {
		t.Errorf("step with the registry stopped = %+v, %d; want a failure, %d", resp, code, exitSomeFailed)
	}
}
