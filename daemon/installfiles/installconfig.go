package installfiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// InstallConfig returns the install-config.yaml assembled from the stored
// cluster and hosts, with install_config_overrides merged in. The error is
// a *report.Invalid with an entry per missing or invalid field.
func InstallConfig(in Input) ([]byte, error) {
	p, err := assemble(in)
	if err != nil {
		return nil, err
	}
	return p.icRaw, nil
}

// defaultNetworkType is assisted-service's default since OpenShift 4.12.
const defaultNetworkType = string(wire.ClusterNetworkTypeOVNKubernetes)

// installConfig builds the install-config as a tree of map[string]any,
// []any and scalars (the shape the overrides merge into), applies the
// overrides and checks the required fields of the result.
func installConfig(in Input, hosts []host, probs *problems) map[string]any {
	c := in.Cluster
	ic := map[string]any{"apiVersion": "v1"}
	setString(ic, "baseDomain", c.BaseDNSDomain)
	ic["metadata"] = map[string]any{}
	setString(ic["metadata"].(map[string]any), "name", c.Name)
	ic["networking"] = networking(c)

	masters, workers, arbiters := countRoles(hosts)
	if masters == 0 && len(hosts) == 0 {
		masters = int(c.ControlPlaneCount)
	}
	ic["controlPlane"] = machinePool("master", masters, c.Hyperthreading)
	ic["compute"] = []any{machinePool("worker", workers, c.Hyperthreading)}
	if arbiters > 0 {
		ic["arbiter"] = machinePool("arbiter", arbiters, c.Hyperthreading)
	}
	if pf := platform(c, hosts, probs); pf != nil {
		ic["platform"] = pf
	}
	setString(ic, "pullSecret", in.PullSecret)
	setString(ic, "sshKey", strings.TrimSpace(c.SSHPublicKey))
	if c.HTTPProxy != "" || c.HTTPSProxy != "" {
		proxy := map[string]any{}
		setString(proxy, "httpProxy", c.HTTPProxy)
		setString(proxy, "httpsProxy", c.HTTPSProxy)
		setString(proxy, "noProxy", noProxy(c))
		ic["proxy"] = proxy
	}

	if c.InstallConfigOverrides != "" {
		if err := mergeOverrides(ic, c.InstallConfigOverrides); err != nil {
			probs.add("install_config_overrides", "%v", err)
		}
	}
	// assisted-service puts the overrides' bundle first, then the infra
	// env's; a plain merge would let one replace the other.
	bundles := []string{}
	if b, _ := ic["additionalTrustBundle"].(string); strings.TrimSpace(b) != "" {
		bundles = append(bundles, strings.TrimSpace(b))
	}
	if b := strings.TrimSpace(in.AdditionalTrustBundle); b != "" {
		bundles = append(bundles, b)
	}
	if len(bundles) > 0 {
		ic["additionalTrustBundle"] = strings.Join(bundles, "\n") + "\n"
	}
	if pem, ok := ic["additionalTrustBundle"].(string); ok && !strings.Contains(pem, "-----BEGIN CERTIFICATE-----") {
		probs.add("additionalTrustBundle", "no PEM certificate in it")
	}

	requireFields(ic, probs)
	return ic
}

func setString(m map[string]any, key, value string) {
	if value != "" {
		m[key] = value
	}
}

func countRoles(hosts []host) (masters, workers, arbiters int) {
	for _, h := range hosts {
		switch h.role {
		case wire.HostRoleMaster:
			masters++
		case wire.HostRoleWorker:
			workers++
		case wire.HostRoleArbiter:
			arbiters++
		}
	}
	return masters, workers, arbiters
}

// machinePool is a controlPlane, compute or arbiter entry. hyperthreading
// is written only when the cluster says which pools have it.
func machinePool(name string, replicas int, ht wire.ClusterHyperthreading) map[string]any {
	pool := map[string]any{"name": name, "replicas": replicas}
	if ht != "" {
		on := ht == wire.ClusterHyperthreadingAll || slices.Contains(strings.Split(string(ht), ","), name+"s")
		pool["hyperthreading"] = map[bool]string{true: "Enabled", false: "Disabled"}[on]
	}
	return pool
}

// networking takes the network lists, falling back to the single CIDR
// fields older clusters carry.
func networking(c *wire.Cluster) map[string]any {
	n := map[string]any{"networkType": defaultNetworkType}
	if c.NetworkType != nil && *c.NetworkType != "" {
		n["networkType"] = string(*c.NetworkType)
	}
	var cluster, service, machine []any
	for _, x := range c.ClusterNetworks {
		if x != nil && x.CIDR != "" {
			cluster = append(cluster, map[string]any{"cidr": string(x.CIDR), "hostPrefix": x.HostPrefix})
		}
	}
	if len(cluster) == 0 && c.ClusterNetworkCIDR != "" {
		cluster = append(cluster, map[string]any{"cidr": c.ClusterNetworkCIDR, "hostPrefix": c.ClusterNetworkHostPrefix})
	}
	for _, x := range c.ServiceNetworks {
		if x != nil && x.CIDR != "" {
			service = append(service, string(x.CIDR))
		}
	}
	if len(service) == 0 && c.ServiceNetworkCIDR != "" {
		service = append(service, c.ServiceNetworkCIDR)
	}
	for _, x := range machineCIDRs(c) {
		machine = append(machine, map[string]any{"cidr": x})
	}
	if cluster != nil {
		n["clusterNetwork"] = cluster
	}
	if service != nil {
		n["serviceNetwork"] = service
	}
	if machine != nil {
		n["machineNetwork"] = machine
	}
	return n
}

func machineCIDRs(c *wire.Cluster) []string {
	var out []string
	for _, x := range c.MachineNetworks {
		if x != nil && x.CIDR != "" {
			out = append(out, string(x.CIDR))
		}
	}
	if len(out) == 0 && c.MachineNetworkCIDR != "" {
		out = append(out, c.MachineNetworkCIDR)
	}
	return out
}

// noProxy is the cluster's no_proxy plus the cluster's own domain and
// networks, as assisted-service writes it ("*" stays alone).
func noProxy(c *wire.Cluster) string {
	if strings.TrimSpace(c.NoProxy) == "*" {
		return "*"
	}
	var list []string
	for _, s := range strings.Split(c.NoProxy, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	list = append(list, "."+c.Name+"."+c.BaseDNSDomain)
	for _, x := range c.ClusterNetworks {
		if x != nil && x.CIDR != "" {
			list = append(list, string(x.CIDR))
		}
	}
	for _, x := range c.ServiceNetworks {
		if x != nil && x.CIDR != "" {
			list = append(list, string(x.CIDR))
		}
	}
	list = append(list, machineCIDRs(c)...)
	return strings.Join(list, ",")
}

// platform is baremetal with the VIPs unless the user manages the
// networking (platform none), or external.
func platform(c *wire.Cluster, hosts []host, probs *problems) map[string]any {
	typ := wire.PlatformTypeBaremetal
	if c.Platform != nil && c.Platform.Type != "" {
		typ = c.Platform.Type
	}
	umn := c.UserManagedNetworking != nil && *c.UserManagedNetworking
	switch {
	case typ == wire.PlatformTypeExternal:
		ext := map[string]any{}
		if e := c.Platform.External; e != nil {
			if e.PlatformName != nil {
				setString(ext, "platformName", *e.PlatformName)
			}
			if e.CloudControllerManager != nil {
				setString(ext, "cloudControllerManager", string(*e.CloudControllerManager))
			}
		}
		return map[string]any{"external": ext}
	case typ == wire.PlatformTypeNone || (typ == wire.PlatformTypeBaremetal && umn):
		return map[string]any{"none": map[string]any{}}
	case typ == wire.PlatformTypeBaremetal:
		return map[string]any{"baremetal": baremetal(c, hosts, probs)}
	default:
		probs.add("platform", "%q is not supported (baremetal, none or external)", typ)
		return nil
	}
}

func baremetal(c *wire.Cluster, hosts []host, probs *problems) map[string]any {
	bm := map[string]any{"provisioningNetwork": "Disabled"}
	var api, ingress []any
	for _, v := range c.APIVIPs {
		if v != nil && v.IP != "" {
			api = append(api, string(v.IP))
		}
	}
	for _, v := range c.IngressVIPs {
		if v != nil && v.IP != "" {
			ingress = append(ingress, string(v.IP))
		}
	}
	if api != nil {
		bm["apiVIPs"] = api
	}
	if ingress != nil {
		bm["ingressVIPs"] = ingress
	}
	if c.LoadBalancer != nil && c.LoadBalancer.Type == wire.LoadBalancerTypeUserManaged {
		bm["loadBalancer"] = map[string]any{"type": "UserManaged"}
	}
	if list := bareMetalHosts(c, hosts, probs); list != nil {
		bm["hosts"] = list
	}
	return bm
}

// bareMetalHosts lists the hosts for the installer's BareMetalHost
// manifests, masters first then by name, each with the MAC of its interface
// in the first machine network (as assisted-service picks it).
func bareMetalHosts(c *wire.Cluster, hosts []host, probs *problems) []any {
	cidrs := machineCIDRs(c)
	if len(cidrs) == 0 || len(hosts) == 0 {
		return nil // requireFields reports the missing machine network
	}
	prefix, err := netip.ParsePrefix(cidrs[0])
	if err != nil {
		probs.add("networking.machineNetwork[0].cidr", "%q: %v", cidrs[0], err)
		return nil
	}
	sorted := slices.Clone(hosts)
	slices.SortStableFunc(sorted, func(a, b host) int {
		if (a.role == wire.HostRoleMaster) != (b.role == wire.HostRoleMaster) {
			if a.role == wire.HostRoleMaster {
				return -1
			}
			return 1
		}
		return strings.Compare(a.hostname, b.hostname)
	})
	var list []any
	for _, h := range sorted {
		mac := bootMAC(h.inventory, prefix)
		if mac == "" {
			name := h.hostname
			if name == "" {
				name = h.id
			}
			probs.add(fmt.Sprintf("platform.baremetal.hosts[%s]", name), "host %s has no interface in the machine network %s", h.id, prefix)
			continue
		}
		mode := "UEFI"
		if h.inventory.Boot != nil && h.inventory.Boot.CurrentBootMode != "" && h.inventory.Boot.CurrentBootMode != "uefi" {
			mode = "legacy"
		}
		list = append(list, map[string]any{"name": h.hostname, "role": string(h.role), "bootMACAddress": mac, "bootMode": mode})
	}
	return list
}

func bootMAC(inv *wire.Inventory, prefix netip.Prefix) string {
	if inv == nil {
		return ""
	}
	for _, nic := range inv.Interfaces {
		if nic == nil {
			continue
		}
		for _, a := range append(slices.Clone(nic.IPv4Addresses), nic.IPv6Addresses...) {
			// The inventory lists addresses with their prefix length.
			addr, err := netip.ParseAddr(a)
			if err != nil {
				p, perr := netip.ParsePrefix(a)
				if perr != nil {
					continue
				}
				addr = p.Addr()
			}
			if prefix.Contains(addr.Unmap()) {
				return nic.MACAddress
			}
		}
	}
	return ""
}

// mergeOverrides deep-merges a JSON object into ic: objects merge, a null
// removes the key, anything else replaces.
func mergeOverrides(ic map[string]any, raw string) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var over map[string]any
	if err := dec.Decode(&over); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if over == nil {
		return errors.New("not a JSON object: null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("not a JSON object: data after the object")
	}
	deepMerge(ic, over)
	return nil
}

func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				deepMerge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// requireFields reports the fields openshift-install cannot do without,
// looked up after the overrides so that an override can supply them.
func requireFields(ic map[string]any, probs *problems) {
	for _, f := range []string{"metadata.name", "baseDomain", "pullSecret"} {
		if s, _ := lookup(ic, f).(string); strings.TrimSpace(s) == "" {
			probs.add(f, "required")
		}
	}
	if ps, ok := lookup(ic, "pullSecret").(string); ok && strings.TrimSpace(ps) != "" && !json.Valid([]byte(ps)) {
		probs.add("pullSecret", "not JSON")
	}
	for _, f := range []string{"networking.clusterNetwork", "networking.serviceNetwork"} {
		if l, _ := lookup(ic, f).([]any); len(l) == 0 {
			probs.add(f, "required")
		}
	}
	if n, ok := asInt(lookup(ic, "controlPlane.replicas")); !ok || n < 1 {
		probs.add("controlPlane.replicas", "at least 1 required (no host has the master role)")
	}
	if lookup(ic, "platform.baremetal") != nil {
		for _, f := range []string{"platform.baremetal.apiVIPs", "platform.baremetal.ingressVIPs", "networking.machineNetwork"} {
			if l, _ := lookup(ic, f).([]any); len(l) == 0 {
				probs.add(f, "required on platform baremetal")
			}
		}
	}
}

// lookup returns the value at a dotted path of nested maps, or nil.
func lookup(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// factsOf reads what the built-in generator needs from the merged
// install-config.
func factsOf(ic map[string]any) facts {
	str := func(path string) string { s, _ := lookup(ic, path).(string); return s }
	f := facts{
		name:        str("metadata.name"),
		baseDomain:  str("baseDomain"),
		pullSecret:  str("pullSecret"),
		trustBundle: str("additionalTrustBundle"),
	}
	for _, line := range strings.Split(str("sshKey"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			f.sshKeys = append(f.sshKeys, line)
		}
	}
	return f
}
