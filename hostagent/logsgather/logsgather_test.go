package logsgather

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

const (
	testCluster  = "3fc2fd22-aaaa-4bbb-8ccc-ddddeeeeffff"
	testInfraEnv = "16618ffc-1111-4222-8333-444455556666"
	testHost     = "5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e03"
)

// hwRoot is a committed hardware tree: disks by id and path, a mount table.
var hwRoot = filepath.Join("..", "..", "testdata", "hw", "master-0")

// service is the assisted service's log routes: it records the progress
// states and the uploads, and answers upload with uploadStatus.
type service struct {
	mu           sync.Mutex
	states       []wire.LogsState
	uploads      []upload
	uploadStatus int
}

type upload struct {
	query    string
	fileName string
	data     []byte
}

func (s *service) start(t *testing.T) *wire.Client {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /api/assisted-install/v2/infra-envs/{ie}/hosts/{host}/logs-progress", func(w http.ResponseWriter, r *http.Request) {
		var p wire.LogsProgressParams
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil || r.PathValue("ie") != testInfraEnv || r.PathValue("host") != testHost {
			http.Error(w, `{"reason":"bad progress"}`, http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.states = append(s.states, p.LogsState)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /api/assisted-install/v2/clusters/{cluster}/logs", func(w http.ResponseWriter, r *http.Request) {
		f, hdr, err := r.FormFile(wire.LogsUploadField)
		if err != nil || r.PathValue("cluster") != testCluster {
			http.Error(w, `{"reason":"bad upload"}`, http.StatusBadRequest)
			return
		}
		data, _ := io.ReadAll(f)
		s.mu.Lock()
		s.uploads = append(s.uploads, upload{r.URL.RawQuery, hdr.Filename, data})
		status := s.uploadStatus
		s.mu.Unlock()
		if status == 0 {
			status = http.StatusNoContent
		}
		if status >= 300 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, `{"code":"413","href":"","id":413,"kind":"Error","reason":"log file is larger than 10 bytes"}`)
			return
		}
		w.WriteHeader(status)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := wire.NewClient(srv.URL, wire.WithAgentToken("agent-jwt"), wire.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hostRoot is a host root with a console text and an agent log.
func hostRoot(t *testing.T, agentLog string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range map[string]string{
		"etc/issue.d/60-rendezvous-host.issue": "This host is node zero\n",
		"etc/issue.d/70-agent-status.issue":    "Agent registered\n",
		"var/log/agent.log":                    agentLog,
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func request() []string {
	return []string{wire.MustEncodeEmbedded(wire.LogsGatherCmdRequest{ClusterID: testCluster, InfraEnvID: testInfraEnv, HostID: testHost, InstallerGather: true})}
}

// open reads a tar.gz into name → content.
func open(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("bundle is not gzip: %v", err)
	}
	tr := tar.NewReader(zr)
	out := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("bundle is not a tar: %v", err)
		}
		c, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[hdr.Name] = string(c)
	}
}

var fixedNow = func() time.Time { return time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC) }

func TestStepUploadsBundle(t *testing.T) {
	svc := &service{}
	run := Step(Options{Service: svc.start(t), Root: hostRoot(t, "agent started\n"), HardwareRoot: hwRoot, TempDir: t.TempDir(), Now: fixedNow})
	out, stderr, code := run(context.Background(), request())
	if out != "" || stderr != "" || code != 0 {
		t.Fatalf("step = %q, %q, %d; want 0 and nothing else", out, stderr, code)
	}
	if diff := cmp.Diff([]wire.LogsState{wire.LogsStateRequested, wire.LogsStateCollecting, wire.LogsStateCompleted}, svc.states); diff != "" {
		t.Errorf("progress reports (-want +got):\n%s", diff)
	}
	if len(svc.uploads) != 1 {
		t.Fatalf("got %d uploads, want 1", len(svc.uploads))
	}
	up := svc.uploads[0]
	if up.fileName != "logs.tar.gz" || !strings.Contains(up.query, "logs_type=host") || !strings.Contains(up.query, "host_id="+testHost) {
		t.Errorf("upload %s?%s, want logs.tar.gz for logs_type host of the host", up.fileName, up.query)
	}

	files := open(t, up.data)
	dir := "logs_host_" + testHost + "/"
	mounts, err := os.ReadFile(filepath.Join(hwRoot, "proc/self/mounts"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		dir + "etc/issue.d/60-rendezvous-host.issue": "This host is node zero\n",
		dir + "etc/issue.d/70-agent-status.issue":    "Agent registered\n",
		dir + "var/log/agent.log":                    "agent started\n",
		dir + "disks/by-id.txt": "nvme-eui.36434b30546000000025384500000001 -> ../../nvme0n1\n" +
			"wwn-0x5000c5004a1b0000 -> ../../sda\n",
		dir + "disks/by-path.txt": "pci-0000:00:17.0-ata-1 -> ../../sda\npci-0000:01:00.0-nvme-1 -> ../../nvme0n1\n",
		dir + "proc/mounts":       string(mounts),
	}
	manifest := files[dir+"manifest.txt"]
	delete(files, dir+"manifest.txt")
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("bundle contents (-want +got):\n%s", diff)
	}
	for _, line := range []string{
		"cluster_id: " + testCluster, "host_id: " + testHost, "gathered_at: 2026-11-22T05:00:00Z",
		"skipped   journal/nodezero.log: not a live host",
		"ok        var/log/agent.log: 14 bytes",
		"ok        disks/by-id.txt:", "ok        proc/mounts:",
	} {
		if !strings.Contains(manifest, line) {
			t.Errorf("manifest.txt lacks %q:\n%s", line, manifest)
		}
	}
}

// TestStepJournal runs a stand-in journalctl: the step asks for the
// newest lines of nodezero's units and keeps what it prints.
func TestStepJournal(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\necho \"journalctl $*\"\n"
	if err := os.WriteFile(filepath.Join(bin, "journalctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	svc := &service{}
	run := Step(Options{Service: svc.start(t), Root: hostRoot(t, ""), HardwareRoot: hwRoot, Journal: true, TempDir: t.TempDir(), Now: fixedNow})
	if _, stderr, code := run(context.Background(), request()); code != 0 {
		t.Fatalf("step = %q, %d; want 0", stderr, code)
	}
	files := open(t, svc.uploads[0].data)
	got := files["logs_host_"+testHost+"/journal/nodezero.log"]
	if want := "journalctl --no-pager --all -o short-iso -u nodezero* -n 200000\n"; got != want {
		t.Errorf("journal entry = %q, want %q", got, want)
	}

	// A journalctl that fails is noted; the rest is still sent.
	if err := os.WriteFile(filepath.Join(bin, "journalctl"), []byte("#!/bin/sh\necho 'No journal files were found.' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(context.Background(), request()); code != 0 {
		t.Fatalf("step with a failing journalctl = %q, %d; want 0", stderr, code)
	}
	files = open(t, svc.uploads[1].data)
	if m := files["logs_host_"+testHost+"/manifest.txt"]; !strings.Contains(m, "failed    journal/nodezero.log: journalctl: exit status 1: No journal files were found.") {
		t.Errorf("manifest.txt does not say why the journal is missing:\n%s", m)
	}
}

func TestStepTruncatesAndNotesMissing(t *testing.T) {
	svc := &service{}
	root := hostRoot(t, strings.Repeat("old\n", 100)+"newest line\n")
	run := Step(Options{Service: svc.start(t), Root: root, HardwareRoot: t.TempDir(), MaxFile: 12, TempDir: t.TempDir(), Now: fixedNow})
	if _, stderr, code := run(context.Background(), request()); code != 0 {
		t.Fatalf("step = %q, %d; want 0", stderr, code)
	}
	files := open(t, svc.uploads[0].data)
	dir := "logs_host_" + testHost + "/"
	if got := files[dir+"var/log/agent.log"]; got != "newest line\n" {
		t.Errorf("truncated agent.log = %q, want its last 12 bytes", got)
	}
	m := files[dir+"manifest.txt"]
	for _, line := range []string{
		"ok        var/log/agent.log: 12 bytes, the last of 412",
		"missing   disks/by-id.txt: no dev/disk/by-id",
		"missing   proc/mounts",
	} {
		if !strings.Contains(m, line) {
			t.Errorf("manifest.txt lacks %q:\n%s", line, m)
		}
	}
}

func TestStepFailures(t *testing.T) {
	svc := &service{uploadStatus: http.StatusRequestEntityTooLarge}
	client := svc.start(t)
	run := Step(Options{Service: client, Root: hostRoot(t, ""), HardwareRoot: hwRoot, TempDir: t.TempDir(), Now: fixedNow})
	_, stderr, code := run(context.Background(), request())
	if code != 1 || !strings.Contains(stderr, "upload logs") || !strings.Contains(stderr, "larger than") {
		t.Errorf("refused upload: step = %q, %d; want 1 with the service's reason", stderr, code)
	}
	if diff := cmp.Diff([]wire.LogsState{wire.LogsStateRequested, wire.LogsStateCollecting}, svc.states); diff != "" {
		t.Errorf("progress of a failed upload (-want +got): no completed\n%s", diff)
	}

	for name, args := range map[string][]string{
		"no args":     nil,
		"not json":    {"{"},
		"no host id":  {`{"cluster_id":"` + testCluster + `","infra_env_id":"` + testInfraEnv + `"}`},
		"two args":    {request()[0], request()[0]},
		"empty json":  {`{}`},
		"array":       {`[]`},
		"nil service": request(),
	} {
		o := Options{Service: client}
		if name == "nil service" {
			o.Service = nil
		}
		if _, stderr, code := Step(o)(context.Background(), args); code != step.ExitNotRun || stderr == "" {
			t.Errorf("%s: step = %q, %d; want %d with a reason", name, stderr, code, step.ExitNotRun)
		}
	}

	// An unwritable temp dir: nothing to send, and it says so.
	svc = &service{}
	run = Step(Options{Service: svc.start(t), Root: hostRoot(t, ""), TempDir: filepath.Join(t.TempDir(), "missing")})
	if _, stderr, code := run(context.Background(), request()); code != 1 || !strings.Contains(stderr, "build logs bundle") {
		t.Errorf("no temp dir: step = %q, %d; want 1 naming the bundle", stderr, code)
	}
	if len(svc.uploads) != 0 {
		t.Errorf("uploads without a bundle: %d", len(svc.uploads))
	}
}
