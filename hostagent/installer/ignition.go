package installer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// keyfileMode is the mode NetworkManager requires of a keyfile: it skips
// files others can read.
const keyfileMode = 0o600

// kernelArgumentsVersion is the first ignition spec with kernelArguments.
const kernelArgumentsVersion = "3.3.0"

// keyfile is one NetworkManager connection file to carry to first boot.
type keyfile struct {
	name string
	data []byte
}

// readKeyfiles returns the *.nmconnection files of dir, sorted by name, as
// coreos-installer --copy-network would copy them. A missing dir is an
// error: the service asks for --copy-network because the host's network
// is configured by keyfiles.
func readKeyfiles(dir string) ([]keyfile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("copy network: %w", err)
	}
	var kfs []keyfile
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".nmconnection") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("copy network: %w", err)
		}
		kfs = append(kfs, keyfile{name: e.Name(), data: b})
	}
	return kfs, nil
}

// applyInstallerArgs folds the installer args the built-in writer can
// honour into ign, so that first boot applies them: --append-karg and
// --delete-karg become kernelArguments.shouldExist and shouldNotExist, and
// the keyfiles (--copy-network) become storage files at
// /etc/NetworkManager/system-connections/<name>. With nothing to apply, ign
// comes back untouched.
//
// The config is edited as generic JSON so that whatever the service put in
// it survives, whatever its 3.x spec version; the version is raised to
// 3.3.0 only when kernel arguments are added to an older config (3.x
// versions are supersets of the earlier ones).
func applyInstallerArgs(ign []byte, a installerArgs, kfs []keyfile) ([]byte, error) {
	if len(a.appendKargs) == 0 && len(a.deleteKargs) == 0 && len(kfs) == 0 {
		return ign, nil
	}
	var cfg map[string]any
	dec := json.NewDecoder(bytes.NewReader(ign))
	dec.UseNumber()
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("apply installer args to ignition: %w", err)
	}
	if cfg == nil {
		return nil, errors.New("apply installer args to ignition: config is null")
	}
	section, err := object(cfg, "ignition")
	if err != nil {
		return nil, err
	}
	version, _ := section["version"].(string)
	minor, ok := specMinor(version)
	if !ok {
		return nil, fmt.Errorf("apply installer args to ignition: ignition.version %q: only spec 3.x configs are supported", version)
	}
	if len(a.appendKargs) > 0 || len(a.deleteKargs) > 0 {
		if minor < 3 {
			section["version"] = kernelArgumentsVersion
		}
		kargs, err := object(cfg, "kernelArguments")
		if err != nil {
			return nil, err
		}
		if err := appendStrings(kargs, "kernelArguments.shouldExist", "shouldExist", a.appendKargs); err != nil {
			return nil, err
		}
		if err := appendStrings(kargs, "kernelArguments.shouldNotExist", "shouldNotExist", a.deleteKargs); err != nil {
			return nil, err
		}
	}
	if len(kfs) > 0 {
		if err := addKeyfiles(cfg, kfs); err != nil {
			return nil, err
		}
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("apply installer args to ignition: %w", err)
	}
	return out, nil
}

// specMinor returns the minor number of a 3.x spec version ("3.4.0",
// "3.6.0-experimental").
func specMinor(version string) (int, bool) {
	rest, ok := strings.CutPrefix(version, "3.")
	if !ok {
		return 0, false
	}
	minor, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(minor)
	return n, err == nil && n >= 0
}

// object returns parent[key] as a JSON object, creating it when absent.
func object(parent map[string]any, key string) (map[string]any, error) {
	v, ok := parent[key]
	if !ok || v == nil {
		m := map[string]any{}
		parent[key] = m
		return m, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("apply installer args to ignition: %s is not an object", key)
	}
	return m, nil
}

// appendStrings appends the values missing from the string list
// parent[key]; where names the list in errors.
func appendStrings(parent map[string]any, where, key string, values []string) error {
	if len(values) == 0 {
		return nil
	}
	var list []any
	if v, ok := parent[key]; ok && v != nil {
		if list, ok = v.([]any); !ok {
			return fmt.Errorf("apply installer args to ignition: %s is not a list", where)
		}
	}
	for _, s := range values {
		if !slices.Contains(list, any(s)) {
			list = append(list, s)
		}
	}
	parent[key] = list
	return nil
}

// addKeyfiles adds each keyfile as a storage file. A path the config
// already writes keeps the config's file: the service's own network
// config wins over the copy, and a duplicate path would make the whole
// config invalid.
func addKeyfiles(cfg map[string]any, kfs []keyfile) error {
	storage, err := object(cfg, "storage")
	if err != nil {
		return err
	}
	var files []any
	if v, ok := storage["files"]; ok && v != nil {
		if files, ok = v.([]any); !ok {
			return errors.New("apply installer args to ignition: storage.files is not a list")
		}
	}
	taken := map[string]bool{}
	for _, f := range files {
		if m, ok := f.(map[string]any); ok {
			if p, ok := m["path"].(string); ok {
				taken[path.Clean(p)] = true
			}
		}
	}
	for _, kf := range kfs {
		p := path.Join(defaultNetworkDir, kf.name)
		if taken[p] {
			continue
		}
		files = append(files, map[string]any{
			"path":      p,
			"mode":      keyfileMode,
			"overwrite": true,
			"contents":  map[string]any{"source": "data:;base64," + base64.StdEncoding.EncodeToString(kf.data)},
		})
	}
	storage["files"] = files
	return nil
}

// ignitionPath is where the host's ignition is saved: assisted's
// /opt/install-dir/<role>-<host id>.ign, under root.
func ignitionPath(root, role, hostID string) string {
	return filepath.Join(root, "opt", "install-dir", role+"-"+hostID+".ign")
}
