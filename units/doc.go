// Package units renders nodezero's systemd units and udev rule and talks to
// systemd over D-Bus behind a small interface. It imports no other package of
// this module. (Built in issue #4.)
package units
