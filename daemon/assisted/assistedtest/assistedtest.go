// Package assistedtest answers the host checks for tests that drive the
// service over HTTP with hand-made hosts: what healthy agents on one flat
// network would reply (every peer reached at L2 and L3, NTP synced, the
// cluster's names resolved to its VIPs). Like net/http/httptest it is for
// tests only; it talks to the service through the v2 client.
package assistedtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// AnswerChecks posts, for every host of the infra-env that has sent an
// inventory, a connectivity report reaching every other such host on each
// of its addresses, a synced NTP source and the resolution of the cluster's
// names (api and api-int to the first API VIP, apps names to the first
// ingress VIP, the wildcard probe and others to nothing). user lists the
// hosts (user token), agent posts the replies (agent token); cluster is the
// hosts' cluster (nil: no names).
func AnswerChecks(ctx context.Context, user, agent *wire.Client, infraEnvID string, cluster *wire.Cluster) error {
	hosts, err := user.ListHosts(ctx, infraEnvID)
	if err != nil {
		return err
	}
	invs := map[string]*wire.Inventory{}
	for _, h := range hosts {
		if h.Inventory == "" {
			continue
		}
		var inv wire.Inventory
		if err := json.Unmarshal([]byte(h.Inventory), &inv); err != nil {
			return fmt.Errorf("host %s inventory: %w", h.ID, err)
		}
		invs[h.ID] = &inv
	}
	for _, h := range hosts {
		self := invs[h.ID]
		if self == nil || len(self.Interfaces) == 0 {
			continue
		}
		rep := Connectivity(self, h.ID, invs)
		if err := post(ctx, agent, infraEnvID, h.ID, wire.StepTypeConnectivityCheck, rep); err != nil {
			return err
		}
		ntp := wire.NTPSynchronizationResponse{NTPSources: []*wire.NTPSource{{SourceName: "ntp.test", SourceState: wire.SourceStateSynced}}}
		if err := post(ctx, agent, infraEnvID, h.ID, wire.StepTypeNTPSynchronizer, ntp); err != nil {
			return err
		}
		if cluster != nil {
			if err := post(ctx, agent, infraEnvID, h.ID, wire.StepTypeDomainResolution, Resolutions(cluster)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Connectivity is the report of a host (inventory self, id selfID) that
// reaches every other host in invs at L2 and L3 on all its addresses.
func Connectivity(self *wire.Inventory, selfID string, invs map[string]*wire.Inventory) wire.ConnectivityReport {
	rep := wire.ConnectivityReport{}
	for id, inv := range invs {
		if id == selfID {
			continue
		}
		rh := &wire.ConnectivityRemoteHost{HostID: id}
		for _, iface := range inv.Interfaces {
			if iface == nil {
				continue
			}
			for _, a := range append(append([]string(nil), iface.IPv4Addresses...), iface.IPv6Addresses...) {
				ip := strings.SplitN(a, "/", 2)[0]
				rh.L2Connectivity = append(rh.L2Connectivity, &wire.L2Connectivity{OutgoingNic: self.Interfaces[0].Name,
					RemoteIPAddress: ip, RemoteMAC: iface.MACAddress, Successful: true})
				rh.L3Connectivity = append(rh.L3Connectivity, &wire.L3Connectivity{OutgoingNic: self.Interfaces[0].Name,
					RemoteIPAddress: ip, Successful: true, AverageRTTMs: 0.4})
			}
		}
		rep.RemoteHosts = append(rep.RemoteHosts, rh)
	}
	return rep
}

// Resolutions resolves the names the service asks about for cluster c:
// api and api-int to the first API VIP, names under apps to the first
// ingress VIP, everything else to nothing.
func Resolutions(c *wire.Cluster) wire.DomainResolutionResponse {
	res := wire.DomainResolutionResponse{}
	for _, name := range validation.DomainsToResolve(c, c.OCPReleaseImage) {
		r := &wire.DomainResolutionResponseResolutionsItem{DomainName: name}
		switch {
		case (strings.HasPrefix(name, "api.") || strings.HasPrefix(name, "api-int.")) && len(c.APIVIPs) > 0:
			r.IPv4Addresses = []string{string(c.APIVIPs[0].IP)}
		case strings.Contains(name, ".apps.") && len(c.IngressVIPs) > 0:
			r.IPv4Addresses = []string{string(c.IngressVIPs[0].IP)}
		}
		res.Resolutions = append(res.Resolutions, r)
	}
	return res
}

func post(ctx context.Context, agent *wire.Client, infraEnvID, hostID string, typ wire.StepType, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return agent.PostStepReply(ctx, infraEnvID, hostID, wire.StepReply{StepType: typ, StepID: string(typ) + "-0badc0de", Output: string(b)})
}
