package tui

import (
	"fmt"
	"sort"
)

// The network page's texts, agent-tui's where it has them (reference
// docs/reference/abi-on-host.md §12.5).
const (
	networkTitle     = "Network Status"
	networkHelp      = "Up/Down move   Enter expand/collapse   c configure network   Esc back   q quit"
	networkHelpNoNet = "Up/Down move   Enter expand/collapse   Esc back   q quit"
)

// treeItem is one node of the network tree: its text and its children.
// The page builds its tview.TreeView from it.
type treeItem struct {
	Text     string
	Children []treeItem
}

// netTree is the network page's tree: the hostname, then "Interfaces"
// (the default route's first), "Routes" and "DNS".
func netTree(st NetState) treeItem {
	host := st.Hostname
	if host == "" {
		host = "(hostname unknown)"
	}
	root := treeItem{Text: host}

	ifaces, routesText := treeItem{Text: "Interfaces"}, "Routes"
	if st.Shared != "" {
		ifaces.Text = "Interfaces: the machine's, not a host's own"
		ifaces.Children = []treeItem{{Text: "why: " + st.Shared}}
		routesText = "Routes: the machine's"
	}
	for _, ifc := range defaultFirst(st) {
		ifaces.Children = append(ifaces.Children, ifaceItem(ifc, isDefault(st, ifc)))
	}
	if len(ifaces.Children) == 0 || len(ifaces.Children) == 1 && st.Shared != "" {
		ifaces.Children = append(ifaces.Children, treeItem{Text: "none"})
	}

	routes := treeItem{Text: routesText}
	for _, r := range st.Routes {
		routes.Children = append(routes.Children, routeItem(r))
	}
	if len(routes.Children) == 0 {
		routes.Children = []treeItem{{Text: "none"}}
	}

	dns := treeItem{Text: "DNS"}
	if len(st.DNS.Servers) > 0 {
		dns.Children = append(dns.Children, listItem("Servers", st.DNS.Servers))
	}
	if len(st.DNS.Search) > 0 {
		dns.Children = append(dns.Children, listItem("Search domains", st.DNS.Search))
	}
	if len(dns.Children) == 0 {
		dns.Children = []treeItem{{Text: "no servers"}}
	}

	root.Children = []treeItem{ifaces, routes, dns}
	return root
}

// isDefault: ifc carries a default route, marked by the reader or found
// among the routes.
func isDefault(st NetState, ifc NetInterface) bool {
	if ifc.Default {
		return true
	}
	for _, r := range st.Routes {
		if isDefaultRoute(r) && r.Interface == ifc.Name && ifc.Name != "" {
			return true
		}
	}
	return false
}

// defaultFirst is st's interfaces with those of the default route first
// and loopback last, each group in the reader's order.
func defaultFirst(st NetState) []NetInterface {
	rank := func(ifc NetInterface) int {
		switch {
		case isDefault(st, ifc):
			return 0
		case ifc.Type == "loopback":
			return 2
		}
		return 1
	}
	out := append([]NetInterface(nil), st.Interfaces...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

func isDefaultRoute(r NetRoute) bool {
	return !r.Destination.IsValid() || r.Destination.Bits() == 0
}

// ifaceItem is "<name> (<type>)" with its MAC, MTU, state and addresses.
// The default route's interface says so in words: agent-tui marks it
// green only.
func ifaceItem(ifc NetInterface, def bool) treeItem {
	text := ifc.Name
	if ifc.Type != "" {
		text += " (" + ifc.Type + ")"
	}
	if def {
		text += ", default route"
	}
	it := treeItem{Text: text}
	if ifc.MAC != "" {
		it.Children = append(it.Children, treeItem{Text: "MAC: " + ifc.MAC})
	}
	if ifc.MTU > 0 {
		it.Children = append(it.Children, treeItem{Text: fmt.Sprintf("MTU: %d", ifc.MTU)})
	}
	if ifc.State != "" {
		it.Children = append(it.Children, treeItem{Text: "State: " + ifc.State})
	}
	var v4, v6 []string
	for _, p := range ifc.Addrs {
		if p.Addr().Unmap().Is4() {
			v4 = append(v4, p.String())
		} else {
			v6 = append(v6, p.String())
		}
	}
	if len(v4) > 0 {
		it.Children = append(it.Children, listItem("IPv4 Addresses", v4))
	}
	if len(v6) > 0 {
		it.Children = append(it.Children, listItem("IPv6 Addresses", v6))
	}
	if len(v4)+len(v6) == 0 {
		it.Children = append(it.Children, treeItem{Text: "No addresses"})
	}
	return it
}

// routeItem is the destination ("default" for a default route) with its
// next hop, as agent-tui words it.
func routeItem(r NetRoute) treeItem {
	dest := r.Destination.String()
	if isDefaultRoute(r) {
		dest = "default"
		if r.Destination.Addr().Is6() || (!r.Destination.IsValid() && r.Gateway.Is6()) {
			dest += " (IPv6)"
		}
	}
	it := treeItem{Text: dest}
	hop := "on-link"
	if r.Gateway.IsValid() {
		hop = r.Gateway.String()
	}
	it.Children = append(it.Children, treeItem{Text: "Next hop address: " + hop})
	if r.Interface != "" {
		it.Children = append(it.Children, treeItem{Text: "Next hop interface: " + r.Interface})
	}
	if r.Metric != 0 {
		it.Children = append(it.Children, treeItem{Text: fmt.Sprintf("Metric: %d", r.Metric)})
	}
	return it
}

func listItem(text string, values []string) treeItem {
	it := treeItem{Text: text}
	for _, v := range values {
		it.Children = append(it.Children, treeItem{Text: v})
	}
	return it
}

// netStatusLine is the line under the tree: reading, or why the network
// state could not be read, or that nothing reads it.
func netStatusLine(reading bool, err error, configured bool) string {
	switch {
	case !configured:
		return "✖ This console has no way to read the network state."
	case reading:
		return "… Reading the network state"
	case err != nil:
		return "✖ Could not read the network state: " + errFirstLine(err.Error())
	}
	return ""
}
