package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/onhost"
)

// The hardware edge of a sandbox or test host after the install step:
// rebooting and the firmware's boot order are faked here, and only here.
//
// A host read from a hardware tree cannot reboot the machine. When the
// installer reboots it, Rebooter records in ROOT/var/lib/nodezero that the
// firmware now boots the written disk, and the `nodezero run` process ends
// with ExitReboot; the sandbox starts the same command again, which finds
// the record (ReadBootDisk) and boots "installed" (RunInstalled).

// ExitReboot is the exit status of a `nodezero run` whose host rebooted
// into its installed disk (the sandbox restarts it).
const ExitReboot = 10

// ErrReboot ends a run whose host rebooted; its ExitStatus is ExitReboot.
var ErrReboot error = rebootError{}

type rebootError struct{}

func (rebootError) Error() string {
	return "the host rebooted into its installed disk (sandbox: start it again)"
}

// ExitStatus is the process's exit status (cmd's statusError).
func (rebootError) ExitStatus() int { return ExitReboot }

// Rebooter is the installer.Rebooter of a hardware-tree host: it records
// the boot disk under Root and, after the delay (at least a second, so the
// install step's reply is posted first), ends the run with ErrReboot
// through End.
type Rebooter struct {
	Root string
	Disk onhost.BootDisk
	End  context.CancelCauseFunc
	Log  *slog.Logger
}

var _ installer.Rebooter = (*Rebooter)(nil)

// Reboot implements installer.Rebooter.
func (r *Rebooter) Reboot(ctx context.Context, delay time.Duration, message string) error {
	r.Disk.RebootedAt = time.Now().UTC()
	b, err := r.Disk.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(r.Root, onhost.BootDiskPath), b, 0o644); err != nil {
		return fmt.Errorf("fake firmware: %w", err)
	}
	wait := max(delay, time.Second)
	r.Log.Info("rebooting (simulated: this process ends and the sandbox starts it again from the written disk)",
		"in", wait, "message", message, "disk", r.Disk.Disk, "stage", "install")
	time.AfterFunc(wait, func() { r.End(ErrReboot) })
	return nil
}

// ReadBootDisk returns the fake firmware's record under root, or nil when
// the host boots its factory image.
func ReadBootDisk(root string) (*onhost.BootDisk, error) {
	b, err := os.ReadFile(filepath.Join(root, onhost.BootDiskPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return onhost.ParseBootDisk(filepath.Join(root, onhost.BootDiskPath), b)
}
