// Package boot carries a host from power-on to running its part of the
// install with nobody at the keyboard: the boot sequence of DESIGN §4 as
// resumable, idempotent stages, each with one status line.
//
//  1. config:    wait for /etc/assisted/rendezvous-host.env; meanwhile watch
//     block devices for the label agent_configimage and load the config
//     image (configimage.Load) when one appears.
//  2. network:   install the keyfiles of the host<N> directory whose
//     mac_interface.ini names one of this host's MACs, renamed to the real
//     NIC names (configimage/nmstate.MatchHost), before NetworkManager
//     reads them.
//  3. hostname:  from /etc/assisted/hostnames/<mac>.
//  4. node zero: this host is node zero when one of its addresses equals
//     NODE_ZERO_IP within a window; it writes /etc/assisted/node0 with the
//     bootstrap MAC. Others learn where the rendezvous host is.
//  5. service (node zero) and agent (every host).
//
// A stage is done when what it leaves on disk says so, so a crash or a
// reboot at any point resumes where it was. The machine is reached through
// small interfaces (links and addresses, hostname, NetworkManager) that
// tests replace at the hardware edge and the network-namespace test bed
// exercises for real.
//
// It may import store, configimage, units and the daemon packages.
package boot
