// Package nmstate is nodezero's pure-Go subset of nmstate: it reads the
// nmstate YAML (or JSON) that agent-config.yaml and NMStateConfig manifests
// carry, validates it with path- and line-precise problems, and renders the
// NetworkManager keyfiles that `nmstatectl gc` would, byte for byte, for
// ethernet, bond, VLAN and linux-bridge interfaces with static or DHCP
// IPv4/IPv6, routes and DNS (docs/reference/nmstate-keyfiles.md is the
// specification). It also owns the two wrappers around those keyfiles: the
// build-time host directories the installer writes under
// /etc/assisted/network (HostDirs, InstallerFormat, MACInterfaceINI) and the
// boot-time matching and renaming that pre-network-manager-config.sh does on
// a host (MatchHost).
//
// Where nmstate is lenient but NetworkManager would refuse the result at
// boot (names over 15 characters, VLAN ids above 4094, two interfaces with
// one name) this package reports an error up front; each such place says so
// in a comment. Everything nmstate knows but this subset does not render is
// an error too, never silently dropped.
//
// Problems are report.Entry values in a report.Report, placed by the
// document's own lines (no file: the caller knows it); the document is
// walked once by report.Walk, which reports duplicate keys and bounds
// aliases, before the nmstate schema reads it.
//
// It may import only the standard library, gopkg.in/yaml.v3 and
// configimage/report; no other package of this module.
package nmstate
