package register

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/wire"
)

// DefaultFailuresFile is where install-status.sh reads the hosts that
// could not be configured (agent-installer-client failureOutputPath).
const DefaultFailuresFile = "/var/run/agent-installer/host-config-failures"

// Result is one pass of ApplyHostConfigs.
type Result struct {
	Updated  []HostUpdate // updates the service accepted in this pass
	Failures []Failure    // hosts not configured as asked, and configs no host matched
}

// Done reports whether every configured host is registered and
// configured.
func (r Result) Done() bool { return len(r.Failures) == 0 }

// Missing returns the names of the configs no registered host matched.
func (r Result) Missing() []string {
	var out []string
	for _, f := range r.Failures {
		if f.Missing {
			out = append(out, f.Config)
		}
	}
	return out
}

// HostUpdate is one accepted update.
type HostUpdate struct {
	HostID, Hostname, Config string
	Role                     string // the role set; "" = unchanged
	DiskID                   string // the installation disk chosen; "" = unchanged
}

// Failure is one line of host-config-failures.
type Failure struct {
	Hostname string // the host's name, or the config's when no host matched
	Config   string // the host config directory's name
	HostID   string // "" when no host matched
	Reason   string
	Missing  bool // no registered host with an inventory has the config's MACs

	// Set when no eligible disk matches the hints (or the host has no
	// eligible disk): the hints and the eligible disks, described.
	Hints         *manifests.RootDeviceHints
	EligibleDisks []string
}

// String is the failure as host-config-failures holds it.
func (f Failure) String() string { return f.Hostname + ": " + f.Reason }

// ApplyHostConfigs is one pass of agent-installer-client configure
// (host_config.go ApplyHostConfigs): it reads the host configs in dir
// (manifests.LoadHostConfigs; see manifests.DefaultHostConfigDir),
// matches the infra-env's hosts that have sent an inventory by MAC
// (case-insensitively), and updates each matched host's role and
// installation disk where they differ from the config. Callers repeat it
// with a backoff until Result.Done. Errors are for what a retry cannot
// mend by waiting: unreadable configs, an unreachable service.
func ApplyHostConfigs(ctx context.Context, c *wire.Client, infraEnvID, dir string) (Result, error) {
	configs, err := manifests.LoadHostConfigs(dir)
	if err != nil {
		return Result{}, err
	}
	return applyConfigs(ctx, c, infraEnvID, configs)
}

// ApplyLocalHostConfigs is ApplyHostConfigs as apply-host-config runs in
// the add-nodes workflow (docs/reference/abi-on-host.md §3.7): only the
// host configs whose mac_addresses name one of macs, this host's NICs,
// are applied; the others belong to the other hosts the node config image
// adds, each its own node zero, and are neither applied nor waited for.
func ApplyLocalHostConfigs(ctx context.Context, c *wire.Client, infraEnvID, dir string, macs []string) (Result, error) {
	configs, err := manifests.LoadHostConfigs(dir)
	if err != nil {
		return Result{}, err
	}
	local := map[string]bool{}
	for _, m := range macs {
		local[strings.ToLower(m)] = true
	}
	var mine []manifests.HostConfig
	for _, hc := range configs {
		for _, m := range hc.MACs {
			if local[m] {
				mine = append(mine, hc)
				break
			}
		}
	}
	return applyConfigs(ctx, c, infraEnvID, mine)
}

// applyConfigs is one pass of ApplyHostConfigs over configs.
func applyConfigs(ctx context.Context, c *wire.Client, infraEnvID string, configs []manifests.HostConfig) (Result, error) {
	var res Result
	hosts, err := c.ListHosts(ctx, infraEnvID)
	if err != nil {
		return res, fmt.Errorf("apply host configs: %w", err)
	}
	matched := make([]bool, len(configs))
	for _, h := range hosts {
		if h == nil || h.Inventory == "" {
			continue // not yet: configs are applied once the inventory is in
		}
		var inv wire.Inventory
		if err := json.Unmarshal([]byte(h.Inventory), &inv); err != nil {
			return res, fmt.Errorf("apply host configs: host %s: inventory: %w", h.ID, err)
		}
		i := validation.MatchHostConfig(configs, &inv)
		if i < 0 {
			continue
		}
		matched[i] = true
		up, fail, err := applyOne(ctx, c, h, &inv, &configs[i])
		if err != nil {
			return res, err
		}
		if up != nil {
			res.Updated = append(res.Updated, *up)
		}
		if fail != nil {
			res.Failures = append(res.Failures, *fail)
		}
	}
	for i, hc := range configs {
		if !matched[i] {
			res.Failures = append(res.Failures, Failure{Hostname: hc.Name, Config: hc.Name, Reason: NotRegisteredReason, Missing: true})
		}
	}
	return res, nil
}

// applyOne brings one host in line with its config.
func applyOne(ctx context.Context, c *wire.Client, h *wire.Host, inv *wire.Inventory, hc *manifests.HostConfig) (*HostUpdate, *Failure, error) {
	name := hostName(h, inv, hc)
	var p wire.HostUpdateParams
	up := HostUpdate{HostID: h.ID, Hostname: name, Config: hc.Name}

	// Installation disk: keep the current one when the hints accept it,
	// else the first acceptable one, else the sentinel.
	acceptable := validation.AcceptableDisks(inv.Disks, hc.Hints)
	noMatch := len(acceptable) == 0
	keep := false
	for _, d := range acceptable {
		if h.InstallationDiskID != "" && (validation.DiskID(d) == h.InstallationDiskID || d.Path == h.InstallationDiskID) {
			keep = true
		}
	}
	if !keep {
		up.DiskID = validation.NotFoundByHints
		if !noMatch {
			up.DiskID = validation.DiskID(acceptable[0])
		}
		p.DisksSelectedConfig = []*wire.DiskConfigParams{{ID: up.DiskID, Role: wire.DiskRoleInstall}}
	}

	// Role: set unless the host has it already, explicitly or as the
	// role the service suggests for an auto-assign host. (The client
	// compares with suggested_role only, which re-sends a role the user
	// set differently by hand.)
	if hc.Role != "" && string(h.Role) != hc.Role && !(h.Role == wire.HostRoleAutoAssign && string(h.SuggestedRole) == hc.Role) {
		up.Role = hc.Role
		r := wire.HostUpdateParamsHostRole(hc.Role)
		p.HostRole = &r
	}

	var refused *wire.APIError
	if up.DiskID != "" || up.Role != "" {
		_, err := c.UpdateHost(ctx, h.InfraEnvID, h.ID, p)
		if err != nil && !errors.As(err, &refused) {
			return nil, nil, fmt.Errorf("apply host configs: host %s: %w", name, err)
		}
	}
	var reasons []string
	if refused != nil {
		reasons = append(reasons, updateRefused(h, up, refused))
	}
	if noMatch {
		reasons = append(reasons, validation.NoDiskMatchesHints(hc.Hints, inv))
	}
	if len(reasons) > 0 {
		f := &Failure{Hostname: name, Config: hc.Name, HostID: h.ID, Reason: strings.Join(reasons, "; ")}
		if noMatch {
			f.Hints = hc.Hints
			f.EligibleDisks = validation.EligibleDiskDescriptions(inv)
		}
		return nil, f, nil
	}
	if up.DiskID == "" && up.Role == "" {
		return nil, nil, nil
	}
	return &up, nil, nil
}

// updateRefused is the client's UpdateFailure.DescribeFailure.
func updateRefused(h *wire.Host, up HostUpdate, err *wire.APIError) string {
	var changes []string
	if up.DiskID != "" {
		changes = append(changes, fmt.Sprintf("installation disk to %s (from %s)", up.DiskID, h.InstallationDiskID))
	}
	if up.Role != "" {
		changes = append(changes, fmt.Sprintf("role to %s (from %s)", up.Role, h.SuggestedRole))
	}
	reason := err.Reason
	if reason == "" {
		reason = "unknown reason"
	}
	return fmt.Sprintf("Failed to update host %s: %s", strings.Join(changes, " and "), reason)
}

// hostName names the host as the user knows it: the name the service was
// given, else the inventory's hostname, else the config's.
func hostName(h *wire.Host, inv *wire.Inventory, hc *manifests.HostConfig) string {
	switch {
	case h.RequestedHostname != "":
		return h.RequestedHostname
	case inv.Hostname != "":
		return inv.Hostname
	}
	return hc.Name
}

// NotRegisteredReason is the reason agent-installer-client writes for a
// host config no registered host matched yet (docs/reference/abi-on-host.md
// §10, step 6): "<hostname>: Host not registered".
const NotRegisteredReason = "Host not registered"

// WriteFailures records res's failures where install-status reads them,
// one "<hostname>: <reason>" line each (agent-installer-client
// recordFailures), or removes the file when there are none.
func WriteFailures(path string, res Result) error {
	if len(res.Failures) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("write host config failures: %w", err)
		}
		return nil
	}
	var b strings.Builder
	for _, f := range res.Failures {
		b.WriteString(oneLine(f.String()))
		b.WriteByte('\n')
	}
	if err := atomicfile.Write(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write host config failures: %w", err)
	}
	return nil
}

// oneLine keeps a failure on its line: a service reason may hold newlines.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
