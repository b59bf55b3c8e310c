package configimage

import (
	"strings"

	"github.com/nodezero/nodezero/configimage/manifests"
)

// Host-wide files the config image carries besides /etc/assisted: what
// ABI's install ignition writes for the host's own services
// (docs/reference/abi-on-host.md §2). A factory image is the same for every
// cluster, so everything cluster-specific arrives in the config image;
// chrony.conf is one ABI writes only into the ignition.
const (
	ClientIDConfPath   = "/etc/NetworkManager/conf.d/clientid.conf"
	DefaultEnvConfPath = "/etc/systemd/system.conf.d/10-default-env.conf"
	ChronyConfPath     = "/etc/chrony.conf"
)

// ClientIDConf makes NetworkManager's DHCPv6 identity follow the NIC's
// MAC, so a host keeps its DHCPv6 address across reboots and reinstalls
// (installer PR #7384).
func ClientIDConf() []byte {
	return []byte("[connection]\nipv6.dhcp-duid=ll\nipv6.dhcp-iaid=mac\n")
}

// DefaultEnvConf is the systemd drop-in that hands the cluster's proxy to
// every service on the host (installer 10-default-env.conf.template); nil
// when there is no proxy. A '%' is doubled: systemd would read it as a
// specifier.
func DefaultEnvConf(p *manifests.Proxy) []byte {
	if p == nil || p.HTTPProxy == "" && p.HTTPSProxy == "" && p.NoProxy == "" {
		return nil
	}
	var b strings.Builder
	b.WriteString("[Manager]\n")
	for _, kv := range [][2]string{{"HTTP_PROXY", p.HTTPProxy}, {"HTTPS_PROXY", p.HTTPSProxy}, {"NO_PROXY", p.NoProxy}} {
		if kv[1] != "" {
			b.WriteString("DefaultEnvironment=" + kv[0] + "=\"" + systemdQuote(kv[1]) + "\"\n")
		}
	}
	return []byte(b.String())
}

// systemdQuote escapes what a double-quoted systemd value cannot hold as
// is: specifiers, backslashes and quotes.
func systemdQuote(s string) string {
	return strings.NewReplacer("%", "%%", `\`, `\\`, `"`, `\"`).Replace(s)
}

// ChronyConf points chronyd at the cluster's NTP sources (installer
// PR #9095: one "server … iburst" each, then makestep, rtcsync and the
// log directory); nil when there are none.
func ChronyConf(sources []string) []byte {
	if len(sources) == 0 {
		return nil
	}
	var b strings.Builder
	for _, s := range sources {
		b.WriteString("server " + s + " iburst\n")
	}
	b.WriteString("makestep 1.0 3\nrtcsync\nlogdir /var/log/chrony\n")
	return []byte(b.String())
}

// proxyOf is the proxy the hosts use: the InfraEnv's, else the
// AgentClusterInstall's (both come from install-config's proxy).
func proxyOf(set *manifests.Set) *manifests.Proxy {
	if set.InfraEnv != nil && set.InfraEnv.Spec.Proxy != nil {
		return set.InfraEnv.Spec.Proxy
	}
	if set.AgentClusterInstall != nil {
		return set.AgentClusterInstall.Spec.Proxy
	}
	return nil
}
