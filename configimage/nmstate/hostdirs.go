package nmstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

// NIC is one agent-config hosts[].interfaces[] entry: a MAC address and the
// logical name the host's network YAML uses for that NIC.
type NIC struct{ MAC, Name string }

// MACInterfaceINI renders mac_interface.ini as the installer does: one
// "<mac>=<name>" line per NIC exactly as typed, lines sorted as whole
// strings, joined by newlines, no trailing newline.
func MACInterfaceINI(nics []NIC) []byte {
	lines := make([]string, len(nics))
	for i, n := range nics {
		lines[i] = n.MAC + "=" + n.Name
	}
	sort.Strings(lines)
	return []byte(strings.Join(lines, "\n"))
}

// Host is one host's static network input: its nmstate document and its NICs.
type Host struct {
	NetworkYAML string
	NICs        []NIC
}

// HostDir is one directory under /etc/assisted/network: "host0", "host1"…
// with the installer-formatted keyfiles and mac_interface.ini.
type HostDir struct {
	Name  string
	Files []Keyfile
}

// HostDirs builds what the installer puts under /etc/assisted/network: dirs
// host0, host1… in the installer's sort order (by the document's compact
// JSON text with sorted keys, as sigs.k8s.io/yaml yields it, then by the
// MAC map), each with the installer-formatted keyfiles plus
// mac_interface.ini. Errors name the host by its position in hosts and its
// first MAC; all hosts are checked before returning.
func HostDirs(hosts []Host) ([]HostDir, error) {
	type prepared struct {
		key   string
		nics  []NIC // sorted by name, then MAC, as the installer sorts them
		files []Keyfile
	}
	var errs []error
	var ready []prepared
	for idx, h := range hosts {
		label := fmt.Sprintf("host %d", idx)
		if len(h.NICs) > 0 {
			label += " (MAC " + h.NICs[0].MAC + ")"
		}
		p, err := prepareHost(idx, h)
		if err != nil {
			errs = append(errs, hostError{label: label, err: err})
			continue
		}
		nics := append([]NIC(nil), h.NICs...)
		sort.SliceStable(nics, func(a, b int) bool { return lessNIC(nics[a], nics[b]) })
		ready = append(ready, prepared{key: p.key, nics: nics, files: p.files})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(ready, func(a, b int) bool {
		if ready[a].key != ready[b].key {
			return ready[a].key < ready[b].key
		}
		return lessNICs(ready[a].nics, ready[b].nics)
	})
	out := make([]HostDir, len(ready))
	for i, r := range ready {
		files := make([]Keyfile, 0, len(r.files)+1)
		for _, k := range r.files {
			files = append(files, InstallerFormat(k))
		}
		files = append(files, Keyfile{Name: "mac_interface.ini", Data: MACInterfaceINI(r.nics)})
		out[i] = HostDir{Name: "host" + strconv.Itoa(i), Files: files}
	}
	return out, nil
}

// hostError names the host an error is about, on every line; errors.As
// still finds the *report.Invalid of an invalid document.
type hostError struct {
	label string
	err   error
}

func (e hostError) Error() string {
	var inv *report.Invalid
	if errors.As(e.err, &inv) {
		lines := make([]string, len(inv.Entries))
		for i, p := range inv.Entries {
			lines[i] = e.label + ": invalid network YAML: " + p.String()
		}
		return strings.Join(lines, "\n")
	}
	return e.label + ": " + e.err.Error()
}

func (e hostError) Unwrap() error { return e.err }

type preparedHost struct {
	key   string
	files []Keyfile
}

func prepareHost(idx int, h Host) (preparedHost, error) {
	if strings.TrimSpace(h.NetworkYAML) == "" {
		return preparedHost{}, errors.New("cannot generate configuration with an empty host YAML")
	}
	// The boot script upper-cases MACs before comparing, so MACs differing
	// only in case are duplicates too (the installer compares them as typed).
	macs, names := map[string]bool{}, map[string]bool{}
	for _, n := range h.NICs {
		m := strings.ToUpper(n.MAC)
		if macs[m] || names[n.Name] {
			return preparedHost{}, fmt.Errorf("MACs and Interfaces for host %d must be unique", idx)
		}
		macs[m], names[n.Name] = true, true
	}
	st, probs := Parse([]byte(h.NetworkYAML))
	if st == nil {
		return preparedHost{}, &report.Invalid{Entries: probs.Errors()}
	}
	files, err := st.Keyfiles()
	if err != nil {
		return preparedHost{}, err
	}
	key, err := compactJSON([]byte(h.NetworkYAML))
	if err != nil {
		return preparedHost{}, fmt.Errorf("convert network YAML to JSON: %w", err)
	}
	return preparedHost{key: key, files: files}, nil
}

// lessNIC is the installer's compareMapInterfaces: logical name, then MAC.
func lessNIC(a, b NIC) bool {
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.MAC < b.MAC
}

// lessNICs is the installer's compareMacInterfaceMaps: shorter first, then
// the first differing entry.
func lessNICs(a, b []NIC) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	for i := range a {
		if lessNIC(a[i], b[i]) {
			return true
		}
		if lessNIC(b[i], a[i]) {
			return false
		}
	}
	return false
}

// compactJSON converts a YAML (or JSON) document the way sigs.k8s.io/yaml's
// YAMLToJSON does: yaml.v2 scalar resolution, then encoding/json (compact,
// map keys sorted, HTML characters escaped).
func compactJSON(doc []byte) (string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return "", err
	}
	v, err := jsonValue(resolve(&root), 0)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func jsonValue(n *yaml.Node, depth int) (any, error) {
	if depth > 100 {
		return nil, errors.New("document nests too deeply")
	}
	switch kindOf(n) {
	case kNull:
		return nil, nil
	case kMap:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			key := k.Value
			if kindOf(k) == kBool {
				b, _ := boolOf(k)
				key = strconv.FormatBool(b)
			}
			v, err := jsonValue(resolve(n.Content[i+1]), depth+1)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
		return m, nil
	case kSeq:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := jsonValue(resolve(c), depth+1)
			if err != nil {
				return nil, err
			}
			s[i] = v
		}
		return s, nil
	case kBool:
		b, _ := boolOf(n)
		return b, nil
	case kInt:
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			return u, nil
		}
		return n.Value, nil
	case kFloat:
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		return f, nil
	}
	return n.Value, nil
}
