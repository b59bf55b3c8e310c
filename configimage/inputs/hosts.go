package inputs

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nodezero/nodezero/configimage/nmstate"
	"github.com/nodezero/nodezero/configimage/report"
)

// agentConfig checks the fields of agent-config.yaml that stand alone
// (AgentConfig.validateAgent and ConvertAgentConfig).
func (v *validator) agentConfig() {
	ac := v.ac
	switch ac.APIVersion {
	case AgentConfigVersion, "v1alpha1":
	case "":
		v.acErr("apiVersion", msgRequired("no version was provided"))
	default:
		v.acErr("apiVersion", msgInvalid(ac.APIVersion, "cannot upconvert from version "+ac.APIVersion))
	}
	if ac.Kind != "" && ac.Kind != "AgentConfig" {
		v.acWarn("kind", msgInvalid(ac.Kind, `kind is ignored; expected "AgentConfig"`))
	}
	if ac.RendezvousIP != "" {
		if err := checkIP(ac.RendezvousIP); err != nil {
			v.acErr("rendezvousIP", msgInvalid(ac.RendezvousIP, err.Error()))
		} else if v.ic != nil && v.ic.Networking != nil {
			// assisted-service fails the host later (belongs-to-machine-cidr)
			// when node zero is outside the machine networks; say it now.
			a, _ := parseAddr(ac.RendezvousIP)
			if m := parsedOnly(v.parsedNets().machine); len(m) > 0 && !inAny(a, m) {
				v.acErr("rendezvousIP", msgInvalid(ac.RendezvousIP, "IP expected to be in one of the machine networks: "+joinCIDRs(m)))
			}
		}
	}
	if ac.BootArtifactsBaseURL != "" {
		if err := checkURI(ac.BootArtifactsBaseURL); err != nil {
			v.acErr("bootArtifactsBaseURL", msgInvalid(ac.BootArtifactsBaseURL, err.Error()))
		} else if u, _ := url.Parse(ac.BootArtifactsBaseURL); u.Scheme != "http" && u.Scheme != "https" {
			v.acErr("bootArtifactsBaseURL", msgNotSupported(u.Scheme, []string{"http", "https"}))
		} else if u.Host == "" {
			v.acErr("bootArtifactsBaseURL", msgInvalid(ac.BootArtifactsBaseURL, "must name a host, e.g. http://192.168.111.1:8080/"))
		}
	}
	for i, s := range ac.AdditionalNTPSources {
		if !checkNTPSource(s) {
			v.acErr(report.Index("additionalNTPSources", i), msgInvalid(s, "NTP server is not a valid IP or domain name"))
		}
	}
}

// hostView is one host from either file, with the paths of its fields.
type hostView struct {
	path       string
	hostname   string
	nameField  string // "hostname" or "name"
	role       string
	hints      *RootDeviceHints
	interfaces []ifaceView
	network    *yaml.Node
	tree       *report.Tree // the file the host is in
	errf       func(path, msg string)
	problem    func(path string, line, col int, sev report.Severity, msg string)
}

type ifaceView struct {
	path string // path of the MAC field
	name string // "" for install-config hosts (a boot MAC only)
	mac  string
}

// file is the name of the file the host is in, for a host built in Go.
func (h hostView) file() string {
	if h.tree != nil {
		return h.tree.File
	}
	if h.nameField == "name" {
		return InstallConfigFile
	}
	return AgentConfigFile
}

// label names a host in a message: its hostname, else its path.
func (h hostView) label() string {
	if h.hostname != "" {
		return h.hostname
	}
	return h.path
}

// collectHosts returns the hosts the install will use: agent-config's, or
// install-config's platform.baremetal.hosts when agent-config lists none
// (AgentHosts.Generate).
func (v *validator) collectHosts() []hostView {
	if v.nc != nil {
		return hostViews(v.nc.Hosts, v.nc.tree, v.ncErr, v.ncAt)
	}
	var icHosts []BareMetalHost
	if v.ic != nil && v.ic.Platform.BareMetal != nil {
		icHosts = v.ic.Platform.BareMetal.Hosts
	}
	if v.ac != nil && len(v.ac.Hosts) > 0 {
		if len(icHosts) > 0 {
			v.icWarn("platform.baremetal.hosts", "hosts from install-config.yaml are ignored; agent-config.yaml lists hosts")
		}
		return hostViews(v.ac.Hosts, v.ac.tree, v.acErr, v.acAt)
	}
	out := make([]hostView, len(icHosts))
	for i, h := range icHosts {
		path := report.Index("platform.baremetal.hosts", i)
		hv := hostView{path: path, hostname: h.Name, nameField: "name", role: h.Role, hints: h.RootDeviceHints,
			network: h.NetworkConfig, tree: v.ic.tree, errf: v.icErr, problem: v.icAt}
		if h.BootMACAddress == "" {
			v.icErr(path+".bootMACAddress", msgRequired("host bootMACAddress is required"))
		} else {
			hv.interfaces = append(hv.interfaces, ifaceView{path: path + ".bootMACAddress", mac: h.BootMACAddress})
		}
		out[i] = hv
	}
	return out
}

// hostViews are the views of agent-config hosts (agent-config.yaml's or
// nodes-config.yaml's, which tree and the two report functions place).
func hostViews(hosts []Host, tree *report.Tree, errf func(path, msg string), problem func(string, int, int, report.Severity, string)) []hostView {
	out := make([]hostView, len(hosts))
	for i, h := range hosts {
		path := report.Index("hosts", i)
		hv := hostView{path: path, hostname: h.Hostname, nameField: "hostname", role: h.Role,
			hints: &hosts[i].RootDeviceHints, network: h.NetworkConfig, tree: tree, errf: errf, problem: problem}
		for j, ifc := range h.Interfaces {
			hv.interfaces = append(hv.interfaces, ifaceView{path: report.Index(path+".interfaces", j) + ".macAddress", name: ifc.Name, mac: ifc.MacAddress})
		}
		out[i] = hv
	}
	return out
}

var supportedRoles = []string{"master", "arbiter", "worker"}

// hosts checks every host and the hosts against the replica counts.
func (v *validator) hosts() {
	hosts := v.collectHosts()
	macs := map[string]bool{}
	names := map[string]bool{}
	for _, h := range hosts {
		if len(h.interfaces) == 0 && h.nameField == "hostname" {
			h.errf(h.path+".interfaces", msgRequired("at least one interface must be defined for each node"))
		}
		for _, ifc := range h.interfaces {
			switch {
			case ifc.mac == "":
				h.errf(ifc.path, msgRequired("each interface must have a MAC address defined"))
				continue
			case checkMAC(ifc.mac) != nil:
				h.errf(ifc.path, msgInvalid(ifc.mac, checkMAC(ifc.mac).Error()))
			}
			m := normalMAC(ifc.mac)
			if macs[m] {
				h.errf(ifc.path, msgInvalid(ifc.mac, "duplicate MAC address found"))
			}
			macs[m] = true
		}
		if h.hostname != "" {
			if err := checkHostname(h.hostname); err != nil {
				h.errf(h.path+"."+h.nameField, msgInvalid(h.hostname, err.Error()))
			}
			if names[h.hostname] {
				h.errf(h.path+"."+h.nameField, msgDuplicate(h.hostname))
			}
			names[h.hostname] = true
		}
		roles := supportedRoles
		if v.nc != nil {
			roles = NodeRoles
		}
		if h.role != "" && !contains(roles, h.role) {
			h.errf(h.path+".role", msgNotSupported(h.role, roles))
		}
		if h.hints != nil {
			v.rootDeviceHints(h, *h.hints)
		}
		if h.network != nil && h.network.Kind != yaml.MappingNode {
			h.errf(h.path+".networkConfig", "must be a mapping: nmstate YAML with interfaces, dns-resolver and routes, found "+report.KindName(h.network))
		} else if h.network != nil {
			v.networkConfig(h)
		}
	}
	nets := v.addressRules(hosts)
	v.rendezvousHost(hosts, nets)
	if v.ic != nil {
		v.hostCounts(hosts)
	}
}

// rootDeviceHints is ValidateHostRootDeviceHints plus the agent rules on
// WWN extensions.
func (v *validator) rootDeviceHints(h hostView, r RootDeviceHints) {
	path := h.path + ".rootDeviceHints"
	if r.DeviceName != "" {
		sub := strings.TrimPrefix(r.DeviceName, "/dev/")
		if sub == r.DeviceName {
			h.errf(path+".deviceName", msgInvalid(r.DeviceName, "Device Name of root device hint must be a /dev/ path"))
		}
		if strings.Contains(strings.TrimPrefix(sub, "disk/by-path/"), "/") {
			h.errf(path+".deviceName", msgInvalid(r.DeviceName, "Device Name of root device hint must be path in /dev/ or /dev/disk/by-path/"))
		}
	}
	if r.MinSizeGigabytes < 0 {
		h.errf(path+".minSizeGigabytes", msgInvalid(bare(fmt.Sprint(r.MinSizeGigabytes)), "must be greater than or equal to 0"))
	}
	if r.WWNWithExtension != "" {
		h.errf(path+".wwnWithExtension", msgForbidden("WWN extensions are not supported in root device hints"))
	}
	if r.WWNVendorExtension != "" {
		h.errf(path+".wwnVendorExtension", msgForbidden("WWN vendor extensions are not supported in root device hints"))
	}
}

// rendezvousHost is validateRendezvousIPNotWorker, plus a check that some
// host can have the rendezvous IP. When no host's networkConfig assigns it
// and every host is static with DHCP off, no host can ever become node zero:
// an error of ours (openshift-install has no such rule; the hosts would wait
// for node zero forever). When some host may take it from DHCP, a warning.
func (v *validator) rendezvousHost(hosts []hostView, nets []hostAddressing) {
	if v.ac == nil || v.ac.RendezvousIP == "" {
		return
	}
	rv, ok := parseAddr(v.ac.RendezvousIP)
	if !ok {
		return
	}
	anyStatic, found := false, false
	for _, h := range hosts {
		ips := networkConfigIPs(h.network, h.path+".networkConfig")
		if len(ips) > 0 {
			anyStatic = true
		}
		p, has := ips[rv]
		if !has {
			continue
		}
		found = true
		if h.role == "worker" {
			h.errf(p, msgForbidden("Host "+h.hostname+" has role 'worker' and has the rendezvousIP assigned to it. "+
				"The rendezvousIP must be assigned to a control plane host."))
		}
	}
	switch {
	case found:
	case v.allStatic(hosts, nets, rv):
		v.acErr("rendezvousIP", msgInvalid(v.ac.RendezvousIP, "no host can become node zero: no host's networkConfig assigns this address, "+
			"and every host has a static networkConfig with DHCP off for all its interfaces"))
	case anyStatic:
		v.acWarn("rendezvousIP", "no host's networkConfig assigns "+v.ac.RendezvousIP+"; node zero must get it from DHCP")
	}
}

// networkConfigIPs returns the static addresses of an nmstate config
// (interfaces[].ipv4|ipv6.address[].ip) with the path of each.
func networkConfigIPs(n *yaml.Node, path string) map[netip.Addr]string {
	out := map[netip.Addr]string{}
	ifaces := mapGet(n, "interfaces")
	if ifaces == nil || ifaces.Kind != yaml.SequenceNode {
		return out
	}
	for i, ifc := range ifaces.Content {
		for _, fam := range []string{"ipv4", "ipv6"} {
			addrs := mapGet(mapGet(ifc, fam), "address")
			if addrs == nil || addrs.Kind != yaml.SequenceNode {
				continue
			}
			for j, a := range addrs.Content {
				ip := mapGet(a, "ip")
				if ip == nil || ip.Kind != yaml.ScalarNode {
					continue
				}
				if addr, ok := parseAddr(ip.Value); ok {
					if _, dup := out[addr]; !dup {
						out[addr] = fmt.Sprintf("%s.interfaces[%d].%s.address[%d].ip", path, i, fam, j)
					}
				}
			}
		}
	}
	return out
}

// mapGet returns the value of key in a mapping node (aliases not followed:
// raw nodes were checked when loaded, and this is a best-effort read).
func mapGet(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// hostCounts compares the hosts with the replica counts: more hosts of a
// role than replicas is an error, fewer a warning (hosts without a role
// fill control plane first, then arbiter, then compute).
func (v *validator) hostCounts(hosts []hostView) {
	masters, arbiters, workers := v.ic.ReplicaCounts()
	want := map[string]int64{"master": masters, "arbiter": arbiters, "worker": workers}
	label := map[string]string{"master": "ControlPlane", "arbiter": "Arbiter", "worker": "Compute"}
	count := map[string]int64{}
	reported := map[string]bool{}
	over := false
	for _, h := range hosts {
		if !contains(supportedRoles, h.role) {
			continue
		}
		count[h.role]++
		if count[h.role] > want[h.role] && !reported[h.role] {
			reported[h.role], over = true, true
			n := int64(0)
			for _, o := range hosts {
				if o.role == h.role {
					n++
				}
			}
			h.errf(h.path+".role", msgForbidden(fmt.Sprintf("the number of %s hosts defined (%d) exceeds the configured %s replicas (%d)",
				h.role, n, label[h.role], want[h.role])))
		}
	}
	total := masters + arbiters + workers
	switch n := int64(len(hosts)); {
	case total >= 0 && n > total && !over:
		h := hosts[total]
		h.errf(h.path, msgForbidden(fmt.Sprintf("the number of hosts defined (%d) exceeds the total of configured ControlPlane, Arbiter and Compute replicas (%d)", n, total)))
	case n > 0 && n < total:
		path, errf := "hosts", v.acWarn
		if hosts[0].nameField == "name" {
			path, errf = "platform.baremetal.hosts", v.icWarn
		}
		errf(path, fmt.Sprintf("%d of %d hosts are defined; the others register without host-specific settings (role, disk, network)", n, total))
	}
}

// networkConfig validates a host's nmstate document as the installer does
// by running nmstatectl gc on it: every problem nmstate would report, and
// the ones NetworkManager would refuse at boot, at its own line.
func (v *validator) networkConfig(h hostView) {
	_, probs := nmstate.ParseNode(h.network)
	for _, p := range probs.Entries {
		path := h.path + ".networkConfig"
		if p.Path != "" {
			path += "." + p.Path
		}
		h.problem(path, p.Line, p.Column, p.Severity, p.Message)
	}
}
