// Package netcheck runs the host agent's network probes: connectivity-check
// (ICMP echo, ARP and a don't-fragment MTU probe towards every other host),
// free-network-addresses (an ARP sweep of a machine network) and verify-vips
// (is anything answering a virtual IP). Everything is done in Go with raw
// sockets: ICMP through github.com/prometheus-community/pro-bing, ARP
// through github.com/mdlayher/arp. Nothing is exec'd.
//
// Network safety: probes leave only through the interfaces Options allows,
// ARP only from an interface whose own subnet holds the target, and a scan
// never covers more than a /22. Stats counts every probe per interface so
// callers and tests can see where packets went.
//
// It imports only the wire package (docs/architecture.md).
package netcheck
