package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nodezero/nodezero/internal/atomicfile"
	"gopkg.in/yaml.v3"
)

// Host config directories (agent-installer-client's HOST_CONFIG_DIR,
// /etc/assisted/hostconfig on a host): one directory per agent-config
// host, named after it (or host-<n>), holding mac_addresses (lower-case
// MACs, one per line) and, when set, role (plain text) and
// root-device-hints.yaml (docs/reference/abi-on-host.md §10).
const (
	DefaultHostConfigDir = "/etc/assisted/hostconfig"
	MACAddressesFile     = "mac_addresses"
	RoleFile             = "role"
	RootDeviceHintsFile  = "root-device-hints.yaml"
)

// RootDeviceHints are metal3's root device hints
// (baremetal-operator RootDeviceHints, installer
// pkg/types/baremetal/rootdevice.go).
type RootDeviceHints struct {
	DeviceName         string `yaml:"deviceName,omitempty"`
	HCTL               string `yaml:"hctl,omitempty"`
	Model              string `yaml:"model,omitempty"`
	Vendor             string `yaml:"vendor,omitempty"`
	SerialNumber       string `yaml:"serialNumber,omitempty"`
	MinSizeGigabytes   int    `yaml:"minSizeGigabytes,omitempty"`
	WWN                string `yaml:"wwn,omitempty"`
	WWNWithExtension   string `yaml:"wwnWithExtension,omitempty"`
	WWNVendorExtension string `yaml:"wwnVendorExtension,omitempty"`
	Rotational         *bool  `yaml:"rotational,omitempty"`
}

// Empty reports whether no hint is given.
func (h *RootDeviceHints) Empty() bool { return h == nil || *h == RootDeviceHints{} }

// String lists the hints given, e.g. "deviceName=/dev/sdb,
// minSizeGigabytes=100"; "none" when there are none.
func (h *RootDeviceHints) String() string {
	if h.Empty() {
		return "none"
	}
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("deviceName", h.DeviceName)
	add("hctl", h.HCTL)
	add("model", h.Model)
	add("vendor", h.Vendor)
	add("serialNumber", h.SerialNumber)
	if h.MinSizeGigabytes != 0 {
		add("minSizeGigabytes", fmt.Sprint(h.MinSizeGigabytes))
	}
	add("wwn", h.WWN)
	add("wwnWithExtension", h.WWNWithExtension)
	add("wwnVendorExtension", h.WWNVendorExtension)
	if h.Rotational != nil {
		add("rotational", fmt.Sprint(*h.Rotational))
	}
	return strings.Join(parts, ", ")
}

// ParseRootDeviceHints reads root-device-hints.yaml strictly: unknown keys
// are errors, as with the client's yaml.UnmarshalStrict.
func ParseRootDeviceHints(data []byte) (*RootDeviceHints, error) {
	var h RootDeviceHints
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&h); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return &h, nil
}

// HostConfig is one host's directory.
type HostConfig struct {
	Name  string   // the directory's name
	MACs  []string // lower case
	Role  string   // master, arbiter, worker; "" = none
	Hints *RootDeviceHints
}

// LoadHostConfigs reads every subdirectory of dir that has a
// mac_addresses file, sorted by name (agent-installer-client
// LoadHostConfigs). A missing dir holds no configs. Unreadable files and
// hints that do not parse are errors.
func LoadHostConfigs(dir string) ([]HostConfig, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load host configs: %w", err)
	}
	var out []HostConfig
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		hc, ok, err := loadHostConfig(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("load host configs: %w", err)
		}
		if ok {
			out = append(out, hc)
		}
	}
	return out, nil
}

func loadHostConfig(dir string) (HostConfig, bool, error) {
	hc := HostConfig{Name: filepath.Base(dir)}
	macs, err := os.ReadFile(filepath.Join(dir, MACAddressesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return hc, false, nil
	}
	if err != nil {
		return hc, false, err
	}
	for line := range strings.Lines(string(macs)) {
		if m := strings.ToLower(strings.TrimSpace(line)); m != "" {
			hc.MACs = append(hc.MACs, m)
		}
	}
	role, err := os.ReadFile(filepath.Join(dir, RoleFile))
	switch {
	case err == nil:
		hc.Role = strings.TrimSpace(string(role))
	case !errors.Is(err, fs.ErrNotExist):
		return hc, false, err
	}
	hints, err := os.ReadFile(filepath.Join(dir, RootDeviceHintsFile))
	switch {
	case err == nil:
		if hc.Hints, err = ParseRootDeviceHints(hints); err != nil {
			return hc, false, fmt.Errorf("%s: %w", filepath.Join(dir, RootDeviceHintsFile), err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return hc, false, err
	}
	return hc, true, nil
}

// HostConfigFiles renders one host config directory: mac_addresses,
// role only when set, root-device-hints.yaml only when a hint is given.
// Names are relative to the directory.
func HostConfigFiles(hc HostConfig) ([]File, error) {
	if hc.Name == "" || strings.ContainsAny(hc.Name, `/\`) || hc.Name == "." || hc.Name == ".." {
		return nil, fmt.Errorf("host config: bad directory name %q", hc.Name)
	}
	var macs strings.Builder
	for _, m := range hc.MACs {
		macs.WriteString(strings.ToLower(m))
		macs.WriteByte('\n')
	}
	files := []File{{MACAddressesFile, []byte(macs.String())}}
	if hc.Role != "" {
		files = append(files, File{RoleFile, []byte(hc.Role)})
	}
	if !hc.Hints.Empty() {
		b, err := marshal(hc.Hints)
		if err != nil {
			return nil, fmt.Errorf("host config %s: %w", hc.Name, err)
		}
		files = append(files, File{RootDeviceHintsFile, b})
	}
	return files, nil
}

// WriteHostConfigs writes one directory per config under dir, in the
// layout LoadHostConfigs reads (HostConfigFiles).
func WriteHostConfigs(dir string, configs []HostConfig) error {
	for _, hc := range configs {
		files, err := HostConfigFiles(hc)
		if err != nil {
			return fmt.Errorf("write host configs: %w", err)
		}
		d := filepath.Join(dir, hc.Name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("write host configs: %w", err)
		}
		for _, f := range files {
			if err := atomicfile.Write(filepath.Join(d, f.Name), f.Data, 0o644); err != nil {
				return fmt.Errorf("write host configs: %w", err)
			}
		}
	}
	return nil
}
