package node

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/nodezero/nodezero/hostagent"
	"github.com/nodezero/nodezero/hostagent/dhcplease"
	"github.com/nodezero/nodezero/hostagent/diskspeed"
	"github.com/nodezero/nodezero/hostagent/dnscheck"
	"github.com/nodezero/nodezero/hostagent/imagecheck"
	"github.com/nodezero/nodezero/hostagent/logsgather"
	"github.com/nodezero/nodezero/hostagent/netcheck"
	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/hostagent/timesync"
	"github.com/nodezero/nodezero/wire"
)

// CheckOptions says where the host checks may reach: what a live host may
// do (its chrony, its disks) and what a test or sandbox host may not.
type CheckOptions struct {
	// Live: the agent runs on the real host it reports (root "/"): chronyc
	// may add the cluster's NTP sources to the host's chronyd, and the disk
	// speed check may write to the installation disk. Hosts read from a
	// hardware tree never touch the machine's chronyd or disks.
	Live bool
	// Loopback: sandbox hosts sharing the machine's loopback (--host-address).
	Loopback bool
	// DNSServer, "host:port", is asked by domain-resolution instead of the
	// host's resolver. A loopback host has no resolver of its own: without
	// one the step is not offered, so no query leaves for the machine's DNS.
	DNSServer string
	// NTPPort is the port of every NTP source the time check asks (0:
	// 123): a sandbox's own server on loopback has another.
	NTPPort int
	// PullSecret authenticates container-image-availability.
	PullSecret []byte
	// TrustBundle is PEM CAs container-image-availability trusts besides
	// the system's (the infra-env's additional_trust_bundle).
	TrustBundle []byte
	// Disks stand in for the block devices of a host that is not Live.
	Disks DiskFiles
	// InstallReady, when set, is asked before the installation disk's
	// speed is measured: whether the host could write that disk at all
	// (a hardware-tree host's built-in writer needs a payload). Its error
	// fails the check with that reason, which the service's validation
	// message carries.
	InstallReady func() error
	Logger       *slog.Logger
}

// addChecks registers the host checks' steps.
func addChecks(steps *hostagent.Steps, o CheckOptions) {
	net := netcheck.Options{}
	if o.Loopback {
		steps.Handle(wire.StepTypeConnectivityCheck, loopbackConnectivity(netcheck.Options{Interfaces: []string{"lo"}, Wait: 3 * time.Second}))
	} else {
		steps.Handle(wire.StepTypeConnectivityCheck, netcheck.ConnectivityStep(net))
		steps.Handle(wire.StepTypeDHCPLeaseAllocate, dhcplease.Step(dhcplease.Options{Logger: o.Logger}))
	}
	steps.Handle(wire.StepTypeFreeNetworkAddresses, netcheck.FreeAddressesStep(net))
	steps.Handle(wire.StepTypeVerifyVIPs, netcheck.VerifyVIPsStep(net))
	ntp := timesync.Options{} // SNTP to the cluster's sources only
	if o.Live {
		ntp = timesync.DefaultOptions()
	}
	ntp.Port = o.NTPPort
	steps.Handle(wire.StepTypeNTPSynchronizer, timesync.Step(ntp))
	if !o.Loopback || o.DNSServer != "" {
		steps.Handle(wire.StepTypeDomainResolution, dnscheck.Step(dnscheck.Options{Server: o.DNSServer}))
	}
	steps.Handle(wire.StepTypeContainerImageAvailability, imagecheck.Step(imagecheck.Options{PullSecret: o.PullSecret, TrustBundle: o.TrustBundle}))
	if o.Live {
		steps.Handle(wire.StepTypeInstallationDiskSpeedCheck, diskspeed.Step(diskspeed.Options{}))
	} else {
		// A file standing in for a disk: 1 MiB is measured, not the
		// agent's 22, which says as much about a file.
		device := o.Disks.Path
		if o.InstallReady != nil {
			device = func(dev string) (string, error) {
				p, err := o.Disks.Path(dev)
				if err == nil {
					err = o.InstallReady()
				}
				return p, err
			}
		}
		steps.Handle(wire.StepTypeInstallationDiskSpeedCheck, diskspeed.Step(diskspeed.Options{Size: 1 << 20, Device: device}))
	}
}

// addFailureSteps registers the steps of a failed or cancelled host:
// stop-installation, and logs-gather, which talks to the service with a
// client of its own carrying the agent's token.
func addFailureSteps(steps *hostagent.Steps, c *wire.Client, cfg AgentConfig) {
	steps.Handle(wire.StepTypeStopInstallation, hostagent.StopInstallationStep(steps, 0))
	o := cfg.Logs
	o.Service = c
	steps.Handle(wire.StepTypeLogsGather, logsgather.Step(o))
}

// loopbackConnectivity is connectivity-check for sandbox hosts that share
// the machine's loopback: ICMP reaches the peers' 127.x addresses, but a
// loopback device has no link layer to send ARP on. Loopback is one
// segment by construction, so a peer address that answers ICMP on it is
// reported reached at L2 too, with the MAC the service gave for it. This is
// the sandbox's stand-in for a switch, not a measurement.
func loopbackConnectivity(o netcheck.Options) step.Func {
	real := netcheck.ConnectivityStep(o)
	return func(ctx context.Context, args []string) (string, string, int) {
		var params wire.ConnectivityCheckParams
		if err := wire.DecodeStepArg(wire.StepTypeConnectivityCheck, args, &params); err != nil {
			return "", err.Error(), step.ExitNotRun
		}
		out, stderr, code := real(ctx, args)
		if code != 0 {
			return out, stderr, code
		}
		var rep wire.ConnectivityReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			return "", err.Error(), 1
		}
		macs := map[string]map[string]string{} // host → ip → mac
		for _, h := range params {
			macs[h.HostID] = map[string]string{}
			for _, n := range h.Nics {
				for _, a := range n.IPAddresses {
					ip, _, _ := strings.Cut(a, "/") // plain addresses, or CIDRs from an older node zero
					macs[h.HostID][ip] = n.MAC
				}
			}
		}
		for _, rh := range rep.RemoteHosts {
			var l2 []*wire.L2Connectivity
			for _, l3 := range rh.L3Connectivity {
				if l3.Successful {
					l2 = append(l2, &wire.L2Connectivity{OutgoingNic: "lo", RemoteIPAddress: l3.RemoteIPAddress,
						RemoteMAC: macs[rh.HostID][l3.RemoteIPAddress], Successful: true})
				}
			}
			rh.L2Connectivity = l2
		}
		b, err := json.Marshal(rep)
		if err != nil {
			return "", err.Error(), 1
		}
		return string(b), stderr, 0
	}
}
