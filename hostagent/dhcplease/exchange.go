package dhcplease

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
)

// firstWait is how long the client waits for the first answer to a
// message; each retry doubles it (nclient4), until ctx ends.
const firstWait = 2 * time.Second

// exchange runs DHCP on interface ifname as mac and returns the lease. With
// a previous address it starts in INIT-REBOOT (RFC 2131 §4.3.2): a
// broadcast REQUEST for that address with no server identifier, which is
// what dhclient sends when its lease file holds an unexpired lease. A NAK
// or silence falls back to DISCOVER (still asking for the old address), as
// dhclient does.
func exchange(ctx context.Context, ifname string, mac net.HardwareAddr, prev netip.Addr, now func() time.Time) (Lease, error) {
	c, err := nclient4.New(ifname,
		nclient4.WithHWAddr(mac),
		nclient4.WithTimeout(firstWait),
		nclient4.WithRetry(math.MaxInt32), // bounded by ctx instead
	)
	if err != nil {
		return Lease{}, fmt.Errorf("open dhcp client on %s: %w", ifname, err)
	}
	defer c.Close()

	mods := []dhcpv4.Modifier{
		// client-id 1+MAC and the hostname dhclient -H sends; dnsmasq
		// keys the lease on the client-id and records the hostname.
		dhcpv4.WithOption(dhcpv4.OptClientIdentifier(append([]byte{1}, mac...))),
		dhcpv4.WithOption(dhcpv4.OptHostName(Hostname(mac, ifname))),
		// Nothing on the macvlan holds the address yet, so ask for
		// broadcast replies rather than unicast to an unconfigured IP.
		dhcpv4.WithBroadcast(true),
	}
	if prev.IsValid() {
		ack, err := initReboot(ctx, c, mac, prev, mods)
		switch {
		case err == nil:
			return leaseFromACK(ack, ifname, now()), nil
		case ctx.Err() != nil:
			return Lease{}, fmt.Errorf("renew %s: %w", prev, ctx.Err())
		}
	}
	// INIT (or INIT-REBOOT refused or unanswered): DISCOVER, hinting the
	// old address if there was one, then REQUEST what is offered. The hint
	// goes in the DISCOVER only; the REQUEST must name the offer.
	discoverMods := mods
	if prev.IsValid() {
		discoverMods = append(discoverMods[:len(discoverMods):len(discoverMods)],
			dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(prev.AsSlice())))
	}
	offer, err := c.DiscoverOffer(ctx, discoverMods...)
	if err == nil {
		var lease *nclient4.Lease
		if lease, err = c.RequestFromOffer(ctx, offer, mods...); err == nil {
			return leaseFromACK(lease.ACK, ifname, now()), nil
		}
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return Lease{}, fmt.Errorf("dhcp discover/request: %w", err)
}

// initReboot sends the INIT-REBOOT REQUEST for addr and returns the ACK.
// It gives the server a quarter of ctx's remaining time (the rest is for
// the DISCOVER fallback).
func initReboot(ctx context.Context, c *nclient4.Client, mac net.HardwareAddr, addr netip.Addr, mods []dhcpv4.Modifier) (*dhcpv4.DHCPv4, error) {
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(dl)/4)
		defer cancel()
	}
	req, err := dhcpv4.New(append([]dhcpv4.Modifier{
		dhcpv4.WithHwAddr(mac),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
		dhcpv4.WithRequestedOptions(dhcpv4.OptionSubnetMask, dhcpv4.OptionRouter,
			dhcpv4.OptionDomainName, dhcpv4.OptionDomainNameServer),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(addr.AsSlice())),
		dhcpv4.WithOption(dhcpv4.OptMaxMessageSize(nclient4.MaxMessageSize)),
	}, mods...)...)
	if err != nil {
		return nil, fmt.Errorf("build dhcp request for %s: %w", addr, err)
	}
	resp, err := c.SendAndRead(ctx, nclient4.DefaultServers, req,
		nclient4.IsMessageType(dhcpv4.MessageTypeAck, dhcpv4.MessageTypeNak))
	if err != nil {
		return nil, fmt.Errorf("dhcp request for %s: %w", addr, err)
	}
	if resp.MessageType() == dhcpv4.MessageTypeNak {
		return nil, fmt.Errorf("dhcp request for %s: %w", addr, &nclient4.ErrNak{Nak: resp})
	}
	if got, ok := netip.AddrFromSlice(resp.YourIPAddr.To4()); !ok || got != addr {
		return nil, errors.New("dhcp request for " + addr.String() + ": ACK for another address " + resp.YourIPAddr.String())
	}
	return resp, nil
}

// Hostname is the DHCP hostname for a VIP lease: the MAC with dashes, then
// the VIP's name, as the agent passes it to dhclient -H
// ("00-1a-4a-b5-4d-cc-api").
func Hostname(mac net.HardwareAddr, name string) string {
	return strings.ReplaceAll(mac.String(), ":", "-") + "-" + name
}

// leaseFromACK turns an ACK received at now into a Lease.
func leaseFromACK(ack *dhcpv4.DHCPv4, ifname string, now time.Time) Lease {
	now = now.UTC().Truncate(time.Second)
	l := Lease{
		Interface: ifname,
		Address:   addrOf(ack.YourIPAddr),
		ServerID:  addrOf(ack.ServerIdentifier()),
		Routers:   addrsOf(ack.Router()),
		DNS:       addrsOf(ack.DNS()),
	}
	if m := ack.SubnetMask(); len(m) == net.IPv4len {
		l.SubnetMask = addrOf(net.IP(m))
	}
	lt := ack.IPAddressLeaseTime(0)
	if lt <= 0 || lt >= math.MaxUint32*time.Second { // absent or infinite
		return l
	}
	l.LeaseTime = lt
	l.Renew = now.Add(ack.IPAddressRenewalTime(lt / 2))
	l.Rebind = now.Add(ack.IPAddressRebindingTime(lt * 7 / 8))
	l.Expire = now.Add(lt)
	return l
}

func addrOf(ip net.IP) netip.Addr {
	a, ok := netip.AddrFromSlice(ip.To4())
	if !ok {
		return netip.Addr{}
	}
	return a
}

func addrsOf(ips []net.IP) []netip.Addr {
	var out []netip.Addr
	for _, ip := range ips {
		if a := addrOf(ip); a.IsValid() {
			out = append(out, a)
		}
	}
	return out
}
