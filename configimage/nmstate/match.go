package nmstate

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// maxIfname is the kernel's IFNAMSIZ less the terminating NUL.
const maxIfname = 15

// MatchHost is the on-host half (ABI's pre-network-manager-config.sh): given
// one host dir's files (keyfiles plus mac_interface.ini) and this machine's
// NICs (MAC → real name), it decides whether the dir is this host's (any ini
// MAC present locally, compared case-insensitively) and returns the
// keyfiles renamed to the real NIC names: a file whose name starts with
// "<logical>." becomes "<real>.…", and "=<logical>" at the end of a line or
// followed by "." becomes "=<real>". A VLAN file "<logical>.<vid>.…" whose
// real name would pass 15 characters gets the real NIC name shortened from
// the right (assisted-service PR #5389), in its file name and wherever
// "=<real>.<vid>" appears. Files whose prefix is not a logical NIC of this
// host keep their names; UUIDs are never touched. Two output files with
// one name are an error.
//
// Deliberate differences from the script: all names are rewritten in one
// pass (the script's sequential sed calls can rename a NIC twice when one
// logical name is another NIC's real name), and the VLAN rewrite only
// matches whole names (the script's unanchored sed turns "=nic.1000" into
// "=<trimmed for vlan 100>0" when VLANs 100 and 1000 share a long NIC name).
func MatchHost(files []Keyfile, local map[string]string) (matched bool, out []Keyfile, err error) {
	var ini *Keyfile
	var conns []Keyfile
	for k := range files {
		switch {
		case files[k].Name == "mac_interface.ini":
			ini = &files[k]
		case strings.HasSuffix(files[k].Name, ".nmconnection"):
			conns = append(conns, files[k])
		}
	}
	if ini == nil {
		return false, nil, errors.New("match host directory: mac_interface.ini is missing")
	}
	if len(conns) == 0 {
		return false, nil, errors.New("match host directory: no .nmconnection files")
	}
	nicOf := map[string]string{} // upper-case MAC → real NIC
	for mac, nic := range local {
		nicOf[strings.ToUpper(mac)] = nic
	}
	renames := map[string]string{} // logical → real, for the MACs present here
	for _, line := range strings.Split(string(ini.Data), "\n") {
		mac, logical, ok := strings.Cut(strings.TrimRight(line, "\r"), "=")
		if !ok || logical == "" {
			continue
		}
		if nic, here := nicOf[strings.ToUpper(mac)]; here {
			matched = true
			if _, dup := renames[logical]; !dup {
				renames[logical] = nic
			}
		}
	}
	if !matched {
		return false, nil, nil
	}
	trims := map[string]string{} // "<real>.<vid>" → "<shortened>.<vid>"
	names := make([]string, len(conns))
	for k, f := range conns {
		names[k] = f.Name
		prefix, ext, _ := strings.Cut(f.Name, ".")
		nic, ok := renames[prefix]
		if !ok {
			continue
		}
		if vid, _, isVLAN := strings.Cut(ext, "."); isVLAN && vid != "" {
			full := nic + "." + vid
			if n := utf8.RuneCountInString(full); n > maxIfname {
				r := []rune(nic)
				keep := len(r) - (n - maxIfname)
				if keep < 1 {
					return true, nil, fmt.Errorf("match host directory: %s cannot be shortened to %d characters", full, maxIfname)
				}
				nic = string(r[:keep])
				trims[full] = nic + "." + vid
			}
		}
		names[k] = nic + "." + ext
	}
	seen := map[string]bool{}
	for k, f := range conns {
		if seen[names[k]] {
			return true, nil, fmt.Errorf("match host directory: connection file name %s is already in use", names[k])
		}
		seen[names[k]] = true
		data := rewriteRefs(string(f.Data), renames)
		data = rewriteRefs(data, trims)
		out = append(out, Keyfile{Name: names[k], Data: []byte(data)})
	}
	return true, out, nil
}

// rewriteRefs replaces "=<from>" by "=<to>" wherever <from> is followed by
// the end of the line or a ".", in one left-to-right pass (longest name
// first when several match).
func rewriteRefs(text string, m map[string]string) string {
	if len(m) == 0 {
		return text
	}
	froms := make([]string, 0, len(m))
	for f := range m {
		froms = append(froms, f)
	}
	sort.Slice(froms, func(a, b int) bool { return len(froms[a]) > len(froms[b]) })
	lines := strings.Split(text, "\n")
	for li, line := range lines {
		var b strings.Builder
		for i := 0; i < len(line); i++ {
			b.WriteByte(line[i])
			if line[i] != '=' {
				continue
			}
			rest := line[i+1:]
			for _, f := range froms {
				if !strings.HasPrefix(rest, f) {
					continue
				}
				after := rest[len(f):]
				if after == "" || after == "\r" || after[0] == '.' {
					b.WriteString(m[f])
					i += len(f)
					break
				}
			}
		}
		lines[li] = b.String()
	}
	return strings.Join(lines, "\n")
}
