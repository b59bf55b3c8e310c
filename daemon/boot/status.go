package boot

import (
	"context"
	"errors"
	"strings"

	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/daemon/register"
)

// ShowInstallStatus puts node zero's install status on the console as
// ABI's start-cluster-installation.sh and install-status.sh do: the start
// decision's one line in 90_start-install (yellow while waiting, green once
// installing, red when the install cannot proceed) and the host config
// failures, one line per host, under "Installation cannot proceed:" in
// 80_host-config, cleared when there are none.
//
// Two things differ from install-status.sh, which showed the failures file
// as it was:
//   - a host config whose host has not registered (or not sent its
//     inventory) yet is no failure: its peers have simply not booted yet,
//     which is the normal state until they do, and the 90 line already
//     counts the hosts not yet known. Those lines are left out, so red
//     means something a person must fix;
//   - once the installation runs or is done, 80_host-config is cleared: the
//     failures file is the last registration pass's, and a host that
//     registered between that pass and the start would otherwise stay
//     "not registered" in red above "Cluster installation started".
func ShowInstallStatus(ctx context.Context, b *issue.Board, status string, failures []string) error {
	color := issue.Yellow
	started := false
	switch {
	case strings.HasPrefix(status, "Cluster installation"), strings.HasPrefix(status, "Cluster is installed"):
		color, started = issue.Green, true
	case strings.HasPrefix(status, "Installation cannot proceed"), strings.HasPrefix(status, "Starting the installation failed"):
		color = issue.LightRed
	}
	_, err := b.Set(ctx, issue.KeyStartInstall, color, status)
	var lines []string
	for _, f := range failures {
		if f = strings.TrimSpace(f); f != "" && !notRegistered(f) {
			lines = append(lines, f)
		}
	}
	if len(lines) == 0 || started {
		return errors.Join(err, b.Clear(ctx, issue.KeyHostConfig))
	}
	_, herr := b.Set(ctx, issue.KeyHostConfig, issue.LightRed, append([]string{"Installation cannot proceed:"}, lines...)...)
	return errors.Join(err, herr)
}

// notRegistered reports whether a failures line only says that its host
// has not registered yet.
func notRegistered(line string) bool {
	return strings.HasSuffix(line, ": "+register.NotRegisteredReason)
}
