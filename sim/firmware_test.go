package sim

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// The fake firmware: no record, a factory boot; the reboot records the
// disk, then ends the run with ErrReboot, whose exit status the sandbox
// restarts on; the next boot reads the record back.
func TestFirmwareReboot(t *testing.T) {
	root := t.TempDir()
	if d, err := ReadBootDisk(root); d != nil || err != nil {
		t.Fatalf("ReadBootDisk of a factory host = %+v, %v; want nil, nil", d, err)
	}
	ctx, end := context.WithCancelCause(context.Background())
	want := onhost.BootDisk{Disk: filepath.Join(root, "sda"), BootDevice: "/dev/sda", ClusterID: testCluster, InfraEnvID: testIE,
		HostID: testHost, Role: string(wire.HostRoleBootstrap), ControlPlaneCount: 3}
	r := &Rebooter{Root: root, Disk: want, End: end, Log: slog.New(slog.DiscardHandler)}
	if err := r.Reboot(ctx, 0, "install done"); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBootDisk(root)
	if err != nil || got == nil {
		t.Fatalf("ReadBootDisk after the reboot = %v, %v", got, err)
	}
	if d := cmp.Diff(want, *got, cmpopts.IgnoreFields(onhost.BootDisk{}, "RebootedAt")); d != "" || got.RebootedAt.IsZero() {
		t.Errorf("boot disk record (-want +got):\n%s(rebooted at %s)", d, got.RebootedAt)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the run was not ended by the reboot")
	}
	cause := context.Cause(ctx)
	var st interface{ ExitStatus() int }
	if !errors.Is(cause, ErrReboot) || !errors.As(cause, &st) || st.ExitStatus() != ExitReboot {
		t.Errorf("the run ended with %v, want ErrReboot with exit status %d", cause, ExitReboot)
	}
}

func TestReadBootDiskBroken(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, onhost.BootDiskPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := ReadBootDisk(root); d != nil || err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("ReadBootDisk of a broken record = %v, %v; want an error naming %s", d, err, p)
	}
}
