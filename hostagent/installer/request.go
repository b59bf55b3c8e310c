package installer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// ErrInvalidRequest marks an install request the installer refuses before
// it reports any stage: the step answers it with exit code -1, as the
// agent does for invalid args.
var ErrInvalidRequest = errors.New("invalid install request")

// Installer args flags, as assisted-service's ValidateInstallerArgs allows
// them (pkg/validations). Every one but -n and --copy-network takes a value.
const (
	flagAppendKarg    = "--append-karg"
	flagDeleteKarg    = "--delete-karg"
	flagCopyNetwork   = "--copy-network"
	flagCopyNetworkN  = "-n"
	flagNetworkDir    = "--network-dir"
	flagSavePartlabel = "--save-partlabel"
	flagSavePartindex = "--save-partindex"
	flagImageURL      = "--image-url"
	flagImageFile     = "--image-file"
)

// takesValue says, for each allowed flag, whether a value follows it.
var takesValue = map[string]bool{
	flagAppendKarg:    true,
	flagDeleteKarg:    true,
	flagCopyNetwork:   false,
	flagCopyNetworkN:  false,
	flagNetworkDir:    true,
	flagSavePartlabel: true,
	flagSavePartindex: true,
	flagImageURL:      true,
	flagImageFile:     true,
}

// allowedFlags lists takesValue's keys in assisted's order, for messages.
var allowedFlags = []string{
	flagAppendKarg, flagDeleteKarg, flagCopyNetworkN, flagCopyNetwork, flagNetworkDir,
	flagSavePartlabel, flagSavePartindex, flagImageURL, flagImageFile,
}

// argValuePunct is the punctuation assisted accepts in an installer arg
// value besides letters and digits. Its regex class is
// [A-Za-z0-9@!#$%*()_+-=//.,";':{}\[\]], in which "+-=" is the range from
// '+' to '=' (+ , - . / 0-9 : ; < =); spelled out here.
const argValuePunct = `@!#$%*()_+,-./:;<="';{}[]`

// defaultNetworkDir is where coreos-installer --copy-network reads
// NetworkManager keyfiles from, and where first boot puts them.
const defaultNetworkDir = "/etc/NetworkManager/system-connections"

// installerArgs is the request's installer_args, parsed.
type installerArgs struct {
	raw         []string // as sent: coreos-installer gets these verbatim
	appendKargs []string
	deleteKargs []string
	copyNetwork bool
	networkDir  string   // --network-dir, else defaultNetworkDir
	builtinCant []string // flags the built-in writer cannot honour, first use order
}

// validateRequest checks req and parses its installer args. It reports
// every problem at once, wrapped in ErrInvalidRequest.
func validateRequest(req wire.InstallCmdRequest) (installerArgs, error) {
	var problems []string
	if !strings.HasPrefix(req.BootDevice, "/dev/") || len(req.BootDevice) == len("/dev/") {
		problems = append(problems, fmt.Sprintf("boot_device %q: must be a path under /dev/", req.BootDevice))
	}
	for i, d := range req.DisksToFormat {
		// As the upstream agent checks them; this installer leaves them as
		// they are (see Run).
		if !strings.HasPrefix(d, "/dev/") || len(d) == len("/dev/") {
			problems = append(problems, fmt.Sprintf("disks_to_format[%d] %q: must be a path under /dev/", i, d))
		}
	}
	switch req.Role {
	case wire.HostRoleMaster, wire.HostRoleWorker, wire.HostRoleBootstrap, wire.HostRoleArbiter:
	default:
		problems = append(problems, fmt.Sprintf("role %q: must be master, worker, bootstrap or arbiter", req.Role))
	}
	if !validHostID(req.HostID) {
		// The id names the ignition file under /opt/install-dir.
		problems = append(problems, fmt.Sprintf("host_id %q: must be letters, digits and dashes", req.HostID))
	}
	switch {
	case req.ControlPlaneCount < 0:
		problems = append(problems, fmt.Sprintf("control_plane_count %d: must not be negative", req.ControlPlaneCount))
	case req.Role == wire.HostRoleBootstrap && req.ControlPlaneCount == 0:
		problems = append(problems, "control_plane_count: required for role bootstrap (1 for a single node)")
	}
	args, argProblems := parseInstallerArgs(req.InstallerArgs)
	problems = append(problems, argProblems...)
	if len(problems) > 0 {
		return installerArgs{}, fmt.Errorf("%w: %s", ErrInvalidRequest, strings.Join(problems, "; "))
	}
	return args, nil
}

func validHostID(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if !isASCIIAlnum(r) && r != '-' {
			return false
		}
	}
	return true
}

func isASCIIAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// parseInstallerArgs parses installer_args, a JSON string array ("" is
// none), with assisted's rules: anything starting with "-" is a flag and
// must be an allowed one; values use a fixed character set. It also
// requires a value after each flag that takes one, which coreos-installer
// would require anyway.
func parseInstallerArgs(s string) (installerArgs, []string) {
	a := installerArgs{networkDir: defaultNetworkDir}
	if strings.TrimSpace(s) == "" {
		return a, nil
	}
	if err := wire.DecodeEmbedded(s, &a.raw); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return a, []string{"installer_args: must be a JSON array of strings"}
		}
		return a, []string{fmt.Sprintf("installer_args: %v", err)}
	}
	var problems []string
	for i := 0; i < len(a.raw); i++ {
		flag := a.raw[i]
		if !strings.HasPrefix(flag, "-") {
			problems = append(problems, fmt.Sprintf("installer_args[%d] %q: a value with no flag before it", i, flag))
			continue
		}
		needsValue, ok := takesValue[flag]
		if !ok {
			problems = append(problems, fmt.Sprintf("installer_args[%d]: unexpected flag %s; allowed flags are %s", i, flag, strings.Join(allowedFlags, ", ")))
			continue
		}
		if !needsValue {
			a.copyNetwork = true
			continue
		}
		if i+1 == len(a.raw) || strings.HasPrefix(a.raw[i+1], "-") {
			problems = append(problems, fmt.Sprintf("installer_args[%d]: flag %s needs a value", i, flag))
			continue
		}
		i++
		value := a.raw[i]
		if !validArgValue(value) {
			problems = append(problems, fmt.Sprintf("installer_args[%d] %q: unexpected characters in the value of %s", i, value, flag))
			continue
		}
		switch flag {
		case flagAppendKarg:
			a.appendKargs = append(a.appendKargs, value)
		case flagDeleteKarg:
			a.deleteKargs = append(a.deleteKargs, value)
		case flagNetworkDir:
			a.networkDir = value
		default:
			if !slices.Contains(a.builtinCant, flag) {
				a.builtinCant = append(a.builtinCant, flag)
			}
		}
	}
	return a, problems
}

func validArgValue(v string) bool {
	if v == "" {
		return false
	}
	for _, r := range v {
		if !isASCIIAlnum(r) && !strings.ContainsRune(argValuePunct, r) {
			return false
		}
	}
	return true
}
