package units

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
)

// Unit and rule file names, as they appear on a host.
const (
	NetworkUnit       = "nodezero-network.service"
	DaemonUnit        = "nodezero.service"
	ConfigImageUnit   = "nodezero-config-image@.service"
	ConsoleUnit       = "nodezero-console.service"
	SerialConsoleUnit = "nodezero-console-serial@.service"
	ConfigImageRule   = "80-agent-config-image.rules"
)

// Where things go, relative to the host root.
const (
	DefaultBinary = "/usr/local/bin/nodezero"
	UnitDir       = "etc/systemd/system"
	RuleDir       = "etc/udev/rules.d"
)

// ConfigImageLabel is the volume label of a config image (docs/architecture.md);
// the udev rule matches it.
const ConfigImageLabel = "agent_configimage"

// header starts every file we render; unit.DeserializeOptions drops comments.
const header = "# Written by `nodezero install`; a re-install replaces this file.\n"

// Params are the choices a rendering depends on.
type Params struct {
	// Binary is the absolute path of the nodezero executable on the host
	// (DefaultBinary when empty). Install lays the binary there.
	Binary string
}

// File is one rendered file.
type File struct {
	Path string      // relative to the host root, e.g. "etc/systemd/system/nodezero.service"
	Mode fs.FileMode // permission bits
	Data []byte
}

func (p Params) binary() (string, error) {
	b := p.Binary
	if b == "" {
		b = DefaultBinary
	}
	// ExecStart= splits on whitespace, unquotes and expands %-specifiers;
	// a path of plain characters needs none of that.
	ok := strings.HasPrefix(b, "/") && path.Clean(b) == b && len(b) > 1
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._+-", r)) {
			ok = false
		}
	}
	if !ok {
		return "", fmt.Errorf("units: binary path %q: want a clean absolute path of letters, digits and ./_+-", b)
	}
	return b, nil
}

// Files renders every unit and the udev rule. Units come first, in the
// order above, then the rule.
func Files(p Params) ([]File, error) {
	bin, err := p.binary()
	if err != nil {
		return nil, err
	}
	var out []File
	for _, u := range []struct {
		name string
		opts []*unit.UnitOption
	}{
		{NetworkUnit, networkUnit(bin)},
		{DaemonUnit, daemonUnit(bin)},
		{ConfigImageUnit, configImageUnit(bin)},
		{ConsoleUnit, consoleUnit(bin)},
		{SerialConsoleUnit, serialConsoleUnit(bin)},
	} {
		body, err := io.ReadAll(unit.Serialize(u.opts))
		if err != nil {
			return nil, fmt.Errorf("units: serialize %s: %w", u.name, err)
		}
		out = append(out, File{Path: path.Join(UnitDir, u.name), Mode: 0o644, Data: append([]byte(header), body...)})
	}
	out = append(out, File{Path: path.Join(RuleDir, ConfigImageRule), Mode: 0o644, Data: []byte(configImageRule())})
	return out, nil
}

func opt(section, name, value string) *unit.UnitOption {
	return unit.NewUnitOption(section, name, value)
}

// networkUnit is ABI's pre-network-manager-config: the keyfiles for this
// host's MACs are in place before NetworkManager reads its directory.
func networkUnit(bin string) []*unit.UnitOption {
	return []*unit.UnitOption{
		opt("Unit", "Description", "nodezero: install this host's static network keyfiles before NetworkManager starts"),
		opt("Unit", "DefaultDependencies", "no"),
		opt("Unit", "After", "local-fs.target"),
		opt("Unit", "Before", "NetworkManager.service network-pre.target"),
		opt("Unit", "Wants", "network-pre.target"),
		opt("Unit", "ConditionPathExists", "/etc/assisted/network"),
		opt("Service", "Type", "oneshot"),
		opt("Service", "RemainAfterExit", "yes"),
		opt("Service", "TimeoutStartSec", "60"),
		opt("Service", "ExecStart", bin+" run --root / --stage network"),
		opt("Install", "WantedBy", "multi-user.target"),
	}
}

// daemonUnit is the on-host daemon: node-zero decision, service, agent and
// status lines (docs/architecture.md). It reports readiness and liveness through
// sd_notify and is restarted without limit, as ABI's agent.service is.
func daemonUnit(bin string) []*unit.UnitOption {
	return []*unit.UnitOption{
		opt("Unit", "Description", "nodezero: on-host installer daemon"),
		opt("Unit", "After", NetworkUnit+" NetworkManager.service network-online.target"),
		opt("Unit", "Wants", "network-online.target"),
		opt("Unit", "StartLimitIntervalSec", "0"),
		opt("Service", "Type", "notify"),
		opt("Service", "NotifyAccess", "main"),
		opt("Service", "WatchdogSec", "60"),
		opt("Service", "Restart", "always"),
		opt("Service", "RestartSec", "3"),
		opt("Service", "TimeoutStartSec", "90"),
		opt("Service", "ExecStart", bin+" run --root /"),
		opt("Install", "WantedBy", "multi-user.target"),
	}
}

// configImageUnit is started by the udev rule with the device's kernel name
// as instance (nodezero-config-image@sr1.service).
//
// The device is /dev/%i, not /dev/%I as ABI's script argument would have
// it: udev hands systemd a unit name that is already valid, so systemd does
// not escape it, and %I would unescape the "-" of a kernel name such as
// dm-0 into "/" (/dev/dm/0). For kernel names without "-" both are the same.
func configImageUnit(bin string) []*unit.UnitOption {
	return []*unit.UnitOption{
		opt("Unit", "Description", "nodezero: load the config image on /dev/%i"),
		opt("Unit", "ConditionPathExists", "!/etc/assisted/no-config-image"),
		opt("Unit", "After", "local-fs.target"),
		opt("Service", "Type", "oneshot"),
		opt("Service", "RemainAfterExit", "yes"),
		opt("Service", "Restart", "on-failure"),
		opt("Service", "RestartSec", "10"),
		opt("Service", "ExecStart", bin+" load-config-image --root / --device /dev/%i"),
	}
}

// consoleUnit puts the console on tty15 of the graphical console. Like
// ABI's agent-interactive-console it is a oneshot without a start timeout
// ordered before the login prompt on tty1, so the prompt waits until the
// person leaves the console.
func consoleUnit(bin string) []*unit.UnitOption {
	return append([]*unit.UnitOption{
		opt("Unit", "Description", "nodezero: console on the graphical terminal"),
		opt("Unit", "ConditionPathExists", "/dev/fb0"),
		opt("Unit", "After", NetworkUnit+" systemd-user-sessions.service"),
		opt("Unit", "Before", "getty@tty1.service"),
	}, append(consoleService(bin, "/dev/tty15", "linux"),
		opt("Service", "TTYVTDisallocate", "yes"),
		opt("Install", "WantedBy", "getty@tty1.service"),
	)...)
}

// serialConsoleUnit is the same console on a serial line, for machines
// without a frame buffer. `systemctl enable` links it into
// serial-getty@.service.wants, so each serial getty pulls in the instance
// of the same line.
func serialConsoleUnit(bin string) []*unit.UnitOption {
	return append([]*unit.UnitOption{
		opt("Unit", "Description", "nodezero: console on serial line /dev/%I"),
		opt("Unit", "ConditionPathExists", "!/dev/fb0"),
		opt("Unit", "After", NetworkUnit+" systemd-user-sessions.service"),
		opt("Unit", "Before", "serial-getty@%i.service"),
	}, append(consoleService(bin, "/dev/%I", "vt220"),
		opt("Install", "WantedBy", "serial-getty@.service"),
	)...)
}

// consoleService is the [Service] section both consoles share.
// TTYVTDisallocate is for virtual terminals only and so is not here.
func consoleService(bin, tty, term string) []*unit.UnitOption {
	return []*unit.UnitOption{
		opt("Service", "Type", "oneshot"),
		opt("Service", "TimeoutStartSec", "0"),
		opt("Service", "ExecStart", bin+" console"),
		opt("Service", "StandardInput", "tty"),
		opt("Service", "StandardOutput", "tty"),
		opt("Service", "TTYPath", tty),
		opt("Service", "TTYReset", "yes"),
		opt("Service", "TTYVHangup", "yes"),
		opt("Service", "Environment", "TERM="+term),
	}
}

// configImageRule asks systemd for a config-image instance named after the
// kernel device (%k, e.g. sr1) when a block device labelled
// agent_configimage appears or its medium changes. ID_FS_LABEL comes from
// the blkid builtin in 60-persistent-storage.rules, hence the 80- prefix.
func configImageRule() string {
	instance := strings.Replace(ConfigImageUnit, "@.", "@%k.", 1)
	return header + `ACTION=="add|change", SUBSYSTEM=="block", ENV{ID_FS_LABEL}=="` + ConfigImageLabel +
		`", TAG+="systemd", ENV{SYSTEMD_WANTS}+="` + instance + `"` + "\n"
}
