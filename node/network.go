package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/hostagent/inventory"
)

// A host's network in the runtime: the stage before NetworkManager, the
// live host's NetworkManager told of late keyfiles, and the links of a
// loopback sandbox host.

// NetworkStage is nodezero-network.service (`nodezero run --stage
// network`): before NetworkManager starts, install this host's keyfiles
// when the config image is already there. A host configured later gets
// them from the full sequence instead.
func NetworkStage(root string, links boot.Links, log *slog.Logger) error {
	ok, err := boot.Configured(root)
	if err != nil || !ok {
		log.Info("network: not configured yet; the keyfiles are installed when the config image arrives", "err", err)
		return err
	}
	ls, err := links.Links()
	if err != nil {
		return err
	}
	res, err := boot.InstallNetwork(root, ls)
	if err != nil {
		return err
	}
	log.Info(res.Status(), "stage", "network")
	return nil
}

// applyWithNetworkManager makes the running NetworkManager read the keyfiles
// nodezero installed and bring each connection up, as ABI's
// load-config-iso.sh does after copying a late config image. Only the live
// host (--root /) does this.
func applyWithNetworkManager(root string) func(context.Context, boot.NetworkResult) error {
	return func(ctx context.Context, r boot.NetworkResult) error {
		nmcli, err := exec.LookPath("nmcli")
		if err != nil {
			return fmt.Errorf("apply network: %w", err)
		}
		run := func(args ...string) error {
			out, err := exec.CommandContext(ctx, nmcli, args...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("nmcli %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
			}
			return nil
		}
		if err := run("connection", "reload"); err != nil {
			return err
		}
		var errs []error
		for _, name := range r.Installed {
			uuid, err := keyfileUUID(filepath.Join(root, boot.SystemConnectionsDir, name))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, run("connection", "up", "uuid", uuid))
		}
		return errors.Join(errs...)
	}
}

// keyfileUUID reads the uuid= of a keyfile's [connection] section.
func keyfileUUID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("apply network: %w", err)
	}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		if v, ok := strings.CutPrefix(line, "uuid="); ok && section == "[connection]" {
			return v, nil
		}
	}
	return "", fmt.Errorf("apply network: %s: no uuid in [connection]", path)
}

// staticLinks are a loopback host's links: the hardware tree's NICs, the
// first holding the host's addresses.
type staticLinks []boot.Link

func (l staticLinks) Links() ([]boot.Link, error) { return l, nil }

func loopbackLinks(ctx context.Context, hwRoot string, addrs []netip.Prefix) (staticLinks, error) {
	inv, err := inventory.Collect(ctx, inventory.Options{Root: hwRoot, Addresses: addrs})
	if err != nil {
		return nil, fmt.Errorf("the links of %s: %w", hwRoot, err)
	}
	var out staticLinks
	for _, nic := range inv.Interfaces {
		l := boot.Link{Name: nic.Name, MAC: strings.ToLower(nic.MACAddress)}
		for _, a := range append(nic.IPv4Addresses, nic.IPv6Addresses...) {
			if p, err := netip.ParsePrefix(a); err == nil {
				l.Addrs = append(l.Addrs, p)
			}
		}
		out = append(out, l)
	}
	return out, nil
}
