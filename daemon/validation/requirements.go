package validation

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/nodezero/nodezero/wire"
)

// defaultRequirementsJSON is a copy of assisted-service's
// data/default_hw_requirements.json (daemon/validation/default_hw_requirements.json here):
// a table of numbers per role, with a "default" entry and a 4.22 min_version
// entry lowering the SNO CPU requirement.
//
//go:embed default_hw_requirements.json
var defaultRequirementsJSON []byte

// RoleRequirements are the hardware requirements of one role.
type RoleRequirements struct {
	CPUCores                         int64
	RAMMiB                           int64
	DiskSizeGB                       int64 // decimal gigabytes
	InstallationDiskSpeedThresholdMs int64
	NetworkLatencyThresholdMs        *float64 // nil: not checked for the role
	PacketLossPercentage             *float64 // nil: not checked for the role
}

// VersionRequirements are the requirements of every role for one OpenShift
// version.
type VersionRequirements struct {
	Version    string
	Master     RoleRequirements
	Arbiter    RoleRequirements
	Worker     RoleRequirements
	SNO        RoleRequirements
	EdgeWorker RoleRequirements
}

// Requirements is a parsed hardware requirements table (assisted's
// HW_VALIDATOR_REQUIREMENTS).
type Requirements struct {
	def   VersionRequirements
	exact map[string]VersionRequirements
	min   []minVersionEntry // ascending by version
}

type minVersionEntry struct {
	v   version
	req VersionRequirements
}

type rawRole struct {
	CPUCores                         *int64   `json:"cpu_cores"`
	RAMMiB                           *int64   `json:"ram_mib"`
	DiskSizeGB                       *int64   `json:"disk_size_gb"`
	InstallationDiskSpeedThresholdMs *int64   `json:"installation_disk_speed_threshold_ms"`
	NetworkLatencyThresholdMs        *float64 `json:"network_latency_threshold_ms"`
	PacketLossPercentage             *float64 `json:"packet_loss_percentage"`
}

type rawEntry struct {
	Version    string   `json:"version"`
	MatchType  string   `json:"match_type"`
	Master     *rawRole `json:"master"`
	Arbiter    *rawRole `json:"arbiter"`
	Worker     *rawRole `json:"worker"`
	SNO        *rawRole `json:"sno"`
	EdgeWorker *rawRole `json:"edge-worker"`
}

const (
	versionDefault      = "default"
	matchTypeExact      = "exact"
	matchTypeMinVersion = "min_version"
)

var (
	defaultOnce sync.Once
	defaultReq  *Requirements
	defaultErr  error
)

// DefaultRequirements returns assisted-service's default requirements table,
// embedded in the binary. The table is parsed once.
func DefaultRequirements() (*Requirements, error) {
	defaultOnce.Do(func() {
		defaultReq, defaultErr = ParseRequirements(defaultRequirementsJSON)
	})
	return defaultReq, defaultErr
}

// ParseRequirements parses a requirements table in assisted's
// HW_VALIDATOR_REQUIREMENTS format. As in assisted, arbiter and edge-worker
// fall back to worker in the default entry, other entries inherit missing
// roles and fields from the default entry, and every role needs positive CPU,
// RAM and disk. Unlike assisted, a "default" entry is always required, so a
// lookup can never fail.
func ParseRequirements(data []byte) (*Requirements, error) {
	var entries []rawEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("parse hardware requirements: %w", err)
	}
	var def *rawEntry
	var exact, minEntries []rawEntry
	seenExact, seenMin := map[string]bool{}, map[string]bool{}
	for i := range entries {
		e := entries[i]
		if e.Version == "" {
			return nil, errors.New("parse hardware requirements: entry must specify \"version\"")
		}
		switch e.MatchType {
		case "", matchTypeExact:
			if seenExact[e.Version] {
				return nil, fmt.Errorf("parse hardware requirements: duplicate version entry %q", e.Version)
			}
			seenExact[e.Version] = true
			if e.Version == versionDefault {
				def = &entries[i]
			} else {
				exact = append(exact, e)
			}
		case matchTypeMinVersion:
			if seenMin[e.Version] {
				return nil, fmt.Errorf("parse hardware requirements: duplicate min_version entry %q", e.Version)
			}
			seenMin[e.Version] = true
			minEntries = append(minEntries, e)
		default:
			return nil, fmt.Errorf("parse hardware requirements: invalid match_type %q for version %q, must be %q or %q",
				e.MatchType, e.Version, matchTypeExact, matchTypeMinVersion)
		}
	}
	if def == nil {
		return nil, errors.New("parse hardware requirements: a \"default\" version entry is required")
	}
	d := *def
	if d.EdgeWorker == nil {
		d.EdgeWorker = d.Worker
	}
	if d.Arbiter == nil {
		d.Arbiter = d.Worker
	}
	r := &Requirements{exact: map[string]VersionRequirements{}}
	var err error
	if r.def, err = resolveEntry(d, rawEntry{}); err != nil {
		return nil, err
	}
	for _, e := range exact {
		if r.exact[e.Version], err = resolveEntry(e, d); err != nil {
			return nil, err
		}
	}
	for _, e := range minEntries {
		v, perr := parseVersion(e.Version)
		if perr != nil {
			return nil, fmt.Errorf("parse hardware requirements: invalid min_version %q: %w", e.Version, perr)
		}
		req, err := resolveEntry(e, d)
		if err != nil {
			return nil, err
		}
		r.min = append(r.min, minVersionEntry{v: v, req: req})
	}
	sort.Slice(r.min, func(i, j int) bool { return r.min[i].v.less(r.min[j].v) })
	return r, nil
}

// resolveEntry merges e over base field by field and checks the result.
func resolveEntry(e, base rawEntry) (VersionRequirements, error) {
	out := VersionRequirements{Version: e.Version}
	roles := []struct {
		name      string
		dst       *RoleRequirements
		own, from *rawRole
	}{
		{"master", &out.Master, e.Master, base.Master},
		{"arbiter", &out.Arbiter, e.Arbiter, base.Arbiter},
		{"worker", &out.Worker, e.Worker, base.Worker},
		{"SNO", &out.SNO, e.SNO, base.SNO},
		{"EDGE-WORKER", &out.EdgeWorker, e.EdgeWorker, base.EdgeWorker},
	}
	for _, ro := range roles {
		if ro.own == nil && ro.from == nil {
			return out, fmt.Errorf("parse hardware requirements: requirements for %s role must be provided for version %s", ro.name, e.Version)
		}
		*ro.dst = mergeRole(ro.own, ro.from)
		d := ro.dst
		switch {
		case d.RAMMiB <= 0:
			return out, fmt.Errorf("parse hardware requirements: RAM requirement must be greater than 0 for version %s and %s role", e.Version, ro.name)
		case d.DiskSizeGB <= 0:
			return out, fmt.Errorf("parse hardware requirements: disk size requirement must be greater than 0 for version %s and %s role", e.Version, ro.name)
		case d.CPUCores <= 0:
			return out, fmt.Errorf("parse hardware requirements: CPU cores requirement must be greater than 0 for version %s and %s role", e.Version, ro.name)
		case d.InstallationDiskSpeedThresholdMs < 0:
			return out, fmt.Errorf("parse hardware requirements: installation disk speed threshold must not be negative for version %s and %s role", e.Version, ro.name)
		}
	}
	return out, nil
}

func mergeRole(own, base *rawRole) RoleRequirements {
	var r RoleRequirements
	for _, src := range []*rawRole{base, own} {
		if src == nil {
			continue
		}
		if src.CPUCores != nil {
			r.CPUCores = *src.CPUCores
		}
		if src.RAMMiB != nil {
			r.RAMMiB = *src.RAMMiB
		}
		if src.DiskSizeGB != nil {
			r.DiskSizeGB = *src.DiskSizeGB
		}
		if src.InstallationDiskSpeedThresholdMs != nil {
			r.InstallationDiskSpeedThresholdMs = *src.InstallationDiskSpeedThresholdMs
		}
		if src.NetworkLatencyThresholdMs != nil {
			v := *src.NetworkLatencyThresholdMs
			r.NetworkLatencyThresholdMs = &v
		}
		if src.PacketLossPercentage != nil {
			v := *src.PacketLossPercentage
			r.PacketLossPercentage = &v
		}
	}
	return r
}

// all returns every version's requirements.
func (r *Requirements) all() []VersionRequirements {
	out := []VersionRequirements{r.def}
	for _, e := range r.exact {
		out = append(out, e)
	}
	for _, e := range r.min {
		out = append(out, e.req)
	}
	return out
}

// ForVersion returns the requirements for an OpenShift version: the entry
// with exactly that version, else the highest min_version entry at or below
// it (compared on major.minor.patch, pre-release suffix dropped), else the
// default entry.
func (r *Requirements) ForVersion(openshiftVersion string) VersionRequirements {
	if req, ok := r.exact[openshiftVersion]; ok {
		return req
	}
	if v, err := parseVersion(openshiftVersion); err == nil {
		for i := len(r.min) - 1; i >= 0; i-- {
			if !v.less(r.min[i].v) {
				return r.min[i].req
			}
		}
	}
	return r.def
}

// ForRole returns the requirements of role. A master (or bootstrap) of a
// single-node cluster gets the SNO values; auto-assign gets worker values,
// as assisted does for a host whose role is not decided yet.
func (vr VersionRequirements) ForRole(role wire.HostRole, sno bool) RoleRequirements {
	switch role {
	case wire.HostRoleMaster, wire.HostRoleBootstrap:
		if sno {
			return vr.SNO
		}
		return vr.Master
	case wire.HostRoleArbiter:
		return vr.Arbiter
	default:
		return vr.Worker
	}
}

// ForHost returns the requirements of a host in a cluster by its effective
// role (role, or suggested role for auto-assign). A worker that is an edge
// device (aarch64 BlueField SoC) gets the edge-worker values.
func (vr VersionRequirements) ForHost(h *wire.Host, inv *wire.Inventory, sno bool) RoleRequirements {
	role := EffectiveRole(h)
	switch role {
	case wire.HostRoleMaster, wire.HostRoleBootstrap, wire.HostRoleArbiter:
		return vr.ForRole(role, sno)
	}
	if isEdgeWorker(inv) {
		return vr.EdgeWorker
	}
	return vr.Worker
}

// Minimum returns the CPU and RAM a host needs for any role: the smaller of
// the master (SNO when single-node) and worker values, used by
// has-min-cpu-cores and has-min-memory.
func (vr VersionRequirements) Minimum(sno bool) (cpuCores, ramMiB int64) {
	m := vr.ForRole(wire.HostRoleMaster, sno)
	return min(m.CPUCores, vr.Worker.CPUCores), min(m.RAMMiB, vr.Worker.RAMMiB)
}

// Unbound returns the requirements of a host bound to no cluster: assisted
// takes the role with the smallest disk among worker, master and arbiter
// (GetInfraEnvHostRequirements).
func (vr VersionRequirements) Unbound() RoleRequirements {
	r := vr.Worker
	if r.DiskSizeGB > vr.Master.DiskSizeGB {
		r = vr.Master
	}
	if r.DiskSizeGB > vr.Arbiter.DiskSizeGB {
		r = vr.Arbiter
	}
	return r
}

// edgeWorkerProducts are assisted's EDGE_WORKERS_PRODUCT_NAMES default,
// lowercased without spaces.
var edgeWorkerProducts = []string{"bluefieldsoc"}

func isEdgeWorker(inv *wire.Inventory) bool {
	if inv == nil || inv.CPU == nil || inv.SystemVendor == nil || inv.CPU.Architecture != "aarch64" {
		return false
	}
	p := strings.ToLower(strings.ReplaceAll(inv.SystemVendor.ProductName, " ", ""))
	for _, e := range edgeWorkerProducts {
		if p == e {
			return true
		}
	}
	return false
}

// version is a release version reduced to its numeric segments.
type version []int

// parseVersion reads "4.22", "4.22.0", "v4.15.3" or "4.22.0-ec.1" (the
// suffix after '-' or '+' is dropped, as assisted's BaseVersion compares do).
func parseVersion(s string) (version, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return nil, errors.New("empty version")
	}
	parts := strings.Split(s, ".")
	v := make(version, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("malformed version %q", s)
		}
		v = append(v, n)
	}
	return v, nil
}

func (v version) less(o version) bool {
	for i := 0; i < max(len(v), len(o)); i++ {
		var a, b int
		if i < len(v) {
			a = v[i]
		}
		if i < len(o) {
			b = o[i]
		}
		if a != b {
			return a < b
		}
	}
	return false
}

// versionAtLeast reports whether openshiftVersion >= floor; an unparsable
// version is not (assisted's BaseVersionGreaterOrEqual errors, which callers
// treat as false).
func versionAtLeast(openshiftVersion, floor string) bool {
	v, err := parseVersion(openshiftVersion)
	if err != nil {
		return false
	}
	f, err := parseVersion(floor)
	if err != nil {
		return false
	}
	return !v.less(f)
}
