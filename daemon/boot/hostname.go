package boot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nodezero/nodezero/internal/atomicfile"
)

// HostnamesDir holds one file per host, named by the host's first MAC in
// lower case, holding the hostname agent-config.yaml gives it.
const HostnamesDir = "/etc/assisted/hostnames"

// ConfiguredHostname returns the hostname the config image gives this
// host: the file of HostnamesDir named by one of the links' MACs
// (set-hostname.sh). ok is false when none is, which is no error: the host
// keeps the name DHCP or the image gave it.
func ConfiguredHostname(root string, links []Link) (name, mac string, ok bool, err error) {
	for _, l := range links {
		if l.MAC == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, HostnamesDir, strings.ToLower(l.MAC)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", "", false, fmt.Errorf("hostname: %w", err)
		}
		name := string(bytes.TrimSpace(b))
		if name == "" {
			return "", "", false, fmt.Errorf("hostname: %s is empty", filepath.Join(HostnamesDir, l.MAC))
		}
		return name, l.MAC, true, nil
	}
	return "", "", false, nil
}

// HostnameSetter gives the host its name.
type HostnameSetter interface {
	SetHostname(ctx context.Context, name string) error
}

// RootHostname writes the name to Root's /etc/hostname (the static name,
// as hostnamectl set-hostname does) and, with Live set, also makes it the
// kernel's name at once. Live changes the machine's UTS namespace: only
// the real host sets it, never a test root.
type RootHostname struct {
	Root string
	Live bool
}

// SetHostname implements HostnameSetter.
func (r RootHostname) SetHostname(_ context.Context, name string) error {
	if err := atomicfile.Write(filepath.Join(r.Root, "/etc/hostname"), []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("set hostname: %w", err)
	}
	if r.Live {
		if err := syscall.Sethostname([]byte(name)); err != nil {
			return fmt.Errorf("set hostname: %w", err)
		}
	}
	return nil
}
