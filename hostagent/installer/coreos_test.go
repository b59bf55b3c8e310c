package installer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/wire"
)

// coreosStandIn is a recording coreos-installer: it appends its argv to
// dir/calls, copies the ignition it was given (-i, its 4th arg) to
// dir/seen.ign, prints progress the way coreos-installer does, and then
// runs tail (which decides the exit).
func coreosStandIn(t *testing.T, dir, tail string) string {
	t.Helper()
	return standIn(t, dir, "coreos-installer", recordArgs(filepath.Join(dir, "calls"))+
		`cp "$4" '`+filepath.Join(dir, "seen.ign")+"'\n"+
		`printf 'Installing Red Hat Enterprise Linux CoreOS 418.94 (Ootpa) x86_64 (512-byte sectors)\n'`+"\n"+
		`printf '> Read disk 100.0 MiB/3.5 GiB (2%%)\r> Read disk 400.0 MiB/3.5 GiB (11%%)\r> Read disk 1.8 GiB/3.5 GiB (51%%)\r'`+"\n"+
		`printf '> Read disk 3.5 GiB/3.5 GiB (100%%)\n' >&2`+"\n"+
		tail)
}

func coreosConfig(t *testing.T, bin string, installerArgs string) (Config, *fakeService, *fakeWriter, *fakeRebooter) {
	t.Helper()
	svc := &fakeService{}
	w := &fakeWriter{}
	rb := &fakeRebooter{}
	req := testRequest(wire.HostRoleMaster, 3)
	req.InstallerArgs = installerArgs
	cfg := testConfig(t, req, svc, w, rb)
	cfg.CoreOSInstaller = bin
	return cfg, svc, w, rb
}

func TestCoreOSInstallerContract(t *testing.T) {
	dir := t.TempDir()
	bin := coreosStandIn(t, dir, "exit 0\n")
	// --image-url is fine here: coreos-installer honours it.
	cfg, svc, w, rb := coreosConfig(t, bin, `["--append-karg","ip=eth0:dhcp","--copy-network","--image-url","http://10.0.0.1/rhcos.raw.gz"]`)
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run = %v", err)
	}
	ign := filepath.Join(cfg.Root, "opt", "install-dir", "master-"+testHostID+".ign")
	want := [][]string{{"install", "--insecure", "-i", ign,
		"--append-karg", "ip=eth0:dhcp", "--copy-network", "--image-url", "http://10.0.0.1/rhcos.raw.gz", testDevice}}
	if diff := cmp.Diff(want, recordedCalls(t, filepath.Join(dir, "calls"))); diff != "" {
		t.Errorf("coreos-installer argv (-want +got):\n%s", diff)
	}
	// coreos-installer applies the args itself: it gets the service's
	// ignition untouched.
	if seen, err := os.ReadFile(filepath.Join(dir, "seen.ign")); err != nil || string(seen) != testIgnition {
		t.Errorf("coreos-installer saw ignition %s (%v), want the service's", seen, err)
	}
	if w.Calls() != 0 {
		t.Errorf("built-in writer called %d times alongside coreos-installer", w.Calls())
	}
	var infos []string
	for _, r := range svc.Reports() {
		if r.Stage == wire.HostStageWritingImageToDisk {
			infos = append(infos, r.Info)
		}
	}
	if diff := cmp.Diff([]string{"", "11%", "51%", "100%"}, infos); diff != "" {
		t.Errorf("write progress infos (-want +got):\n%s", diff)
	}
	if len(rb.Calls()) != 1 {
		t.Errorf("Reboot calls = %v, want one", rb.Calls())
	}
}

func TestCoreOSInstallerRetries(t *testing.T) {
	t.Parallel() // waits out the retry delays
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	bin := coreosStandIn(t, dir, `n=$(cat '`+count+`' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '`+count+"'\n"+
		`if [ $n -lt 3 ]; then echo "Error: fake failure $n" >&2; exit 1; fi`+"\n")
	cfg, svc, _, rb := coreosConfig(t, bin, "")
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run = %v, want success on the third attempt", err)
	}
	if n := len(recordedCalls(t, filepath.Join(dir, "calls"))); n != 3 {
		t.Errorf("coreos-installer ran %d times, want 3", n)
	}
	if got := svc.last(t); got.Stage != wire.HostStageRebooting {
		t.Errorf("last report = %v, want Rebooting", got)
	}
	if len(rb.Calls()) != 1 {
		t.Errorf("Reboot calls = %v, want one", rb.Calls())
	}
}

func TestCoreOSInstallerFails(t *testing.T) {
	t.Parallel() // waits out the retry delays
	dir := t.TempDir()
	bin := coreosStandIn(t, dir, `echo "Error: opening device: No such device" >&2; exit 1`+"\n")
	cfg, svc, _, rb := coreosConfig(t, bin, "")
	err := Run(context.Background(), cfg)
	if err == nil {
		t.Fatal("Run = nil, want coreos-installer's failure")
	}
	if n := len(recordedCalls(t, filepath.Join(dir, "calls"))); n != coreosAttempts {
		t.Errorf("coreos-installer ran %d times, want %d", n, coreosAttempts)
	}
	last := svc.last(t)
	if last.Stage != wire.HostStageFailed {
		t.Fatalf("last report = %v, want Failed", last)
	}
	// The command's own words reach the service.
	if !strings.Contains(last.Info, "No such device") {
		t.Errorf("Failed info %q lacks coreos-installer's output", last.Info)
	}
	if len(rb.Calls()) != 0 {
		t.Errorf("Reboot called %v", rb.Calls())
	}
}

func TestCoreOSInstallerStopped(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	bin := standIn(t, dir, "coreos-installer", "touch '"+started+"'\nexec sleep 600\n")
	cfg, svc, _, rb := coreosConfig(t, bin, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// stop-installation arrives once the command runs.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if _, err := os.Stat(started); err == nil {
				cancel()
				return
			}
			if !backoff.Sleep(ctx, 5*time.Millisecond) {
				return
			}
		}
	}()
	err := Run(ctx, cfg)
	cancel()
	wg.Wait()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if got := svc.last(t); got.Stage != wire.HostStageWritingImageToDisk {
		t.Errorf("last report = %v, want Writing image to disk and no Failed", got)
	}
	if len(rb.Calls()) != 0 {
		t.Errorf("Reboot called %v", rb.Calls())
	}
}

func TestCoreOSInstallerMissingPath(t *testing.T) {
	cfg, svc, _, _ := coreosConfig(t, filepath.Join(t.TempDir(), "no-such-coreos-installer"), "")
	if err := Run(context.Background(), cfg); err == nil {
		t.Fatal("Run with a missing coreos-installer path = nil, want an error")
	}
	if got := svc.Reports(); len(got) != 1 || got[0].Stage != wire.HostStageFailed {
		t.Errorf("reports = %v, want only Failed", got)
	}
}

func TestEfibootmgrContract(t *testing.T) {
	loader := `\EFI\redhat\shimx64.efi`
	if runtime.GOARCH == "arm64" {
		loader = `\EFI\redhat\shimaa64.efi`
	}
	tests := []struct {
		name      string
		efi       bool
		exit      string
		wantCalls [][]string
	}{
		{"uefi host", true, "exit 0", [][]string{{"-v", "-d", testDevice, "-p", "2", "-c", "-L", "Red Hat Enterprise Linux", "-l", loader}}},
		{"failure is not fatal", true, "echo 'EFI variables are not supported on this system.' >&2; exit 2",
			[][]string{{"-v", "-d", testDevice, "-p", "2", "-c", "-L", "Red Hat Enterprise Linux", "-l", loader}}},
		{"bios host", false, "exit 0", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := standIn(t, dir, "efibootmgr", recordArgs(filepath.Join(dir, "calls"))+tt.exit+"\n")
			svc := &fakeService{}
			rb := &fakeRebooter{}
			cfg := testConfig(t, testRequest(wire.HostRoleMaster, 3), svc, &fakeWriter{}, rb)
			cfg.Efibootmgr = bin
			if tt.efi {
				cfg.EFIDir = t.TempDir()
			}
			if err := Run(context.Background(), cfg); err != nil {
				t.Fatalf("Run = %v", err)
			}
			if diff := cmp.Diff(tt.wantCalls, recordedCalls(t, filepath.Join(dir, "calls"))); diff != "" {
				t.Errorf("efibootmgr calls (-want +got):\n%s", diff)
			}
			if len(rb.Calls()) != 1 {
				t.Errorf("Reboot calls = %v, want one", rb.Calls())
			}
		})
	}
}

func TestParseProgress(t *testing.T) {
	out := "Installing RHCOS\n> Read disk 1 GiB/3 GiB (33%)\r> Read disk 2 GiB/3 GiB (66%)\r\n" +
		"bogus (101%)\nno percent here\n(7%) at the start\r\nlast (100%)"
	var got []int
	parseProgress(strings.NewReader(out), func(p int) { got = append(got, p) })
	if diff := cmp.Diff([]int{33, 66, 7, 100}, got); diff != "" {
		t.Errorf("parseProgress (-want +got):\n%s", diff)
	}
}

func TestParseProgressLongLine(t *testing.T) {
	// A line beyond the scanner's limit stops parsing but is drained, so
	// that the command is never blocked on a full pipe.
	r := strings.NewReader("(5%)\n" + strings.Repeat("x", 1<<20) + "\n(50%)\n")
	var got []int
	parseProgress(r, func(p int) { got = append(got, p) })
	if r.Len() != 0 {
		t.Errorf("%d bytes left unread", r.Len())
	}
	if len(got) == 0 || got[0] != 5 {
		t.Errorf("progress = %v, want 5 first", got)
	}
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 8}
	for _, s := range []string{"0123", "4567", "89ab"} {
		tb.Write([]byte(s))
	}
	if got := string(tb.Bytes()); got != "456789ab" {
		t.Errorf("tail = %q, want %q", got, "456789ab")
	}
}

func TestLookTool(t *testing.T) {
	dir := t.TempDir()
	bin := standIn(t, dir, "tool", "exit 0\n")
	if got, err := lookTool("-", "sh"); got != "" || err != nil {
		t.Errorf(`lookTool("-") = %q, %v; want never`, got, err)
	}
	if got, err := lookTool(bin, "tool"); got != bin || err != nil {
		t.Errorf("lookTool(path) = %q, %v; want %q", got, err, bin)
	}
	if _, err := lookTool(filepath.Join(dir, "missing"), "tool"); err == nil {
		t.Error("lookTool(missing path) = nil error")
	}
	t.Setenv("PATH", dir)
	if got, err := lookTool("", "tool"); got != bin || err != nil {
		t.Errorf(`lookTool("") = %q, %v; want %q from PATH`, got, err, bin)
	}
	if got, err := lookTool("", "coreos-installer"); got != "" || err != nil {
		t.Errorf(`lookTool("") of a tool not in PATH = %q, %v; want none`, got, err)
	}
}
