package netcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"

	"github.com/mdlayher/arp"
	"github.com/mdlayher/ethernet"
	"github.com/nodezero/nodezero/internal/backoff"
)

// arpConn sends ARP requests from one interface and address and collects
// the replies addressed to it. Its reader goroutine runs until close.
type arpConn struct {
	c     *arp.Client
	via   nicAddr
	stats *Stats

	wg      sync.WaitGroup
	mu      sync.Mutex
	replies map[netip.Addr][]string // sender IP -> distinct sender MACs, in arrival order
	readErr error
}

// openARP opens a raw ARP socket on via's interface. via must be an IPv4
// address of an allowed interface: callers only pass what localState gave.
func openARP(via nicAddr, stats *Stats) (*arpConn, error) {
	c, err := arp.Dial(&via.nic.ifi)
	if err != nil {
		return nil, fmt.Errorf("open arp socket on %s: %w", via.nic.ifi.Name, err)
	}
	a := &arpConn{c: c, via: via, stats: stats, replies: map[netip.Addr][]string{}}
	a.wg.Add(1)
	go a.read()
	return a, nil
}

func (a *arpConn) read() {
	defer a.wg.Done()
	mine := a.via.nic.ifi.HardwareAddr
	for {
		p, _, err := a.c.Read()
		if err != nil {
			a.mu.Lock()
			a.readErr = err
			a.mu.Unlock()
			return
		}
		if p.Operation != arp.OperationReply || !slices.Equal(p.TargetHardwareAddr, mine) {
			continue
		}
		mac := p.SenderHardwareAddr.String()
		ip := p.SenderIP.Unmap()
		a.mu.Lock()
		if !slices.Contains(a.replies[ip], mac) {
			a.replies[ip] = append(a.replies[ip], mac)
		}
		a.mu.Unlock()
	}
}

// request broadcasts one who-has target, from the interface's address.
func (a *arpConn) request(target netip.Addr) error {
	ifi := a.via.nic.ifi
	p, err := arp.NewPacket(arp.OperationRequest, ifi.HardwareAddr, a.via.addr.Addr(),
		net.HardwareAddr{0, 0, 0, 0, 0, 0}, target)
	if err != nil {
		return fmt.Errorf("build arp request for %s: %w", target, err)
	}
	if err := a.c.WriteTo(p, ethernet.Broadcast); err != nil {
		return fmt.Errorf("send arp request for %s on %s: %w", target, ifi.Name, err)
	}
	a.stats.add(ProbeARP, ifi.Name, 1)
	return nil
}

// answered returns the MACs that answered for ip so far.
func (a *arpConn) answered(ip netip.Addr) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.replies[ip])
}

// close stops the reader and waits for it.
func (a *arpConn) close() error {
	err := a.c.Close()
	a.wg.Wait()
	return err
}

// arpQuery sends count requests for target from via, o.Interval apart,
// waits o.Wait for late replies and returns every distinct MAC that
// answered (more than one means an address conflict).
func arpQuery(ctx context.Context, via nicAddr, target netip.Addr, count int, o Options) ([]string, error) {
	a, err := openARP(via, o.Stats)
	if err != nil {
		return nil, err
	}
	var errs []error
	for i := range count {
		if i > 0 && !backoff.Sleep(ctx, o.Interval) {
			break
		}
		if err := a.request(target); err != nil {
			errs = append(errs, err)
			break
		}
	}
	backoff.Sleep(ctx, o.Wait)
	macs := a.answered(target)
	if err := a.close(); err != nil {
		errs = append(errs, fmt.Errorf("close arp socket on %s: %w", via.nic.ifi.Name, err))
	}
	return macs, errors.Join(errs...)
}

// arpSweep asks for every address in targets from via, in rounds o.Interval
// apart (each round asks only for the addresses still silent), then waits
// o.Wait; it returns the set of addresses that answered.
func arpSweep(ctx context.Context, via nicAddr, targets []netip.Addr, rounds int, o Options) (map[netip.Addr]bool, error) {
	a, err := openARP(via, o.Stats)
	if err != nil {
		return nil, err
	}
	var sendErr error
	for r := 0; r < rounds && sendErr == nil && ctx.Err() == nil; r++ {
		if r > 0 && !backoff.Sleep(ctx, o.Interval) {
			break
		}
		for _, t := range targets {
			if ctx.Err() != nil {
				break
			}
			if len(a.answered(t)) > 0 {
				continue
			}
			if sendErr = a.request(t); sendErr != nil {
				break
			}
		}
	}
	backoff.Sleep(ctx, o.Wait)
	up := map[netip.Addr]bool{}
	for _, t := range targets {
		if len(a.answered(t)) > 0 {
			up[t] = true
		}
	}
	closeErr := a.close()
	if closeErr != nil {
		closeErr = fmt.Errorf("close arp socket on %s: %w", via.nic.ifi.Name, closeErr)
	}
	if err := errors.Join(sendErr, closeErr, ctx.Err()); err != nil {
		return nil, err
	}
	return up, nil
}
