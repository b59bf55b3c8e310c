// Package units renders nodezero's systemd units and udev rule, lays them
// with the binary into a host root the way `systemctl enable` would, and
// talks to systemd over D-Bus behind a small interface. It imports no other
// package of this module (docs/architecture.md).
//
// Files is the single source of truth for what goes on a host: every unit is
// built as go-systemd unit options and serialized; the enablement symlinks
// are derived from the rendered [Install] sections (Links), never from a
// second list. Install writes them into a root atomically and idempotently.
// Systemd starts and reloads units through PID 1's D-Bus API.
//
// The units replace the ABI's on-host set (docs/reference/abi-on-host.md §3, §8.4):
//
//	nodezero-network.service           pre-network-manager-config.service
//	nodezero.service                   node-zero, agent, set-hostname and the assisted pod
//	nodezero-config-image@.service     load-config-iso@.service (started by udev)
//	nodezero-console.service           agent-interactive-console.service
//	nodezero-console-serial@.service   agent-interactive-console-serial@.service
//	80-agent-config-image.rules        the ABI rule of the same name
package units
