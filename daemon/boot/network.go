package boot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/nmstate"
	"github.com/nodezero/nodezero/internal/atomicfile"
)

// SystemConnectionsDir is where NetworkManager reads keyfiles from.
const SystemConnectionsDir = "/etc/NetworkManager/system-connections"

// NetworkResult says what the network stage did.
type NetworkResult struct {
	HostDir   string   // the host<N> directory that matched; "" = none
	Installed []string // keyfile names written to SystemConnectionsDir
}

// Status is the stage's console line.
func (r NetworkResult) Status() string {
	if r.HostDir == "" {
		return "No static network configuration for this host's MAC addresses: using DHCP"
	}
	return fmt.Sprintf("Static network configuration %s installed: %s", r.HostDir, strings.Join(r.Installed, ", "))
}

// InstallNetwork is ABI's pre-network-manager-config contract: among the
// config image's /etc/assisted/network/host*/ directories it finds the one
// whose mac_interface.ini names a MAC of links, renames its keyfiles to the
// real NIC names (nmstate.MatchHost) and installs them for
// NetworkManager, 0600, each replaced atomically. Run again it writes the
// same files, so it is safe after a crash. No network directory, or none
// for this host, is no error: the host uses DHCP. Two directories matching
// one host is an error, as it would make the host's network a guess.
func InstallNetwork(root string, links []Link) (NetworkResult, error) {
	var res NetworkResult
	dirs, err := filepath.Glob(filepath.Join(root, configimage.NetworkDir, "host*"))
	if err != nil {
		return res, fmt.Errorf("static network: %w", err)
	}
	sort.Strings(dirs)
	local := map[string]string{}
	for _, l := range links {
		if l.MAC != "" {
			local[strings.ToUpper(l.MAC)] = l.Name
		}
	}
	var chosen []nmstate.Keyfile
	for _, d := range dirs {
		files, err := readKeyfiles(d)
		if err != nil {
			return res, err
		}
		ok, out, err := nmstate.MatchHost(files, local)
		if err != nil {
			return res, fmt.Errorf("static network: %s: %w", filepath.Base(d), err)
		}
		if !ok {
			continue
		}
		if res.HostDir != "" {
			return NetworkResult{}, fmt.Errorf("static network: %s and %s both name this host's MAC addresses", res.HostDir, filepath.Base(d))
		}
		res.HostDir, chosen = filepath.Base(d), out
	}
	for _, f := range chosen {
		if !strings.HasSuffix(f.Name, ".nmconnection") {
			continue
		}
		if err := atomicfile.Write(filepath.Join(root, SystemConnectionsDir, f.Name), f.Data, 0o600); err != nil {
			return res, fmt.Errorf("static network: install %s: %w", f.Name, err)
		}
		res.Installed = append(res.Installed, f.Name)
	}
	return res, nil
}

func readKeyfiles(dir string) ([]nmstate.Keyfile, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("static network: %w", err)
	}
	var out []nmstate.Keyfile
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("static network: %w", err)
		}
		out = append(out, nmstate.Keyfile{Name: e.Name(), Data: b})
	}
	return out, nil
}
