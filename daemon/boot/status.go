package boot

import (
	"context"
	"errors"
	"strings"

	"github.com/nodezero/nodezero/daemon/issue"
)

// ShowInstallStatus puts node zero's install status on the console as
// ABI's start-cluster-installation.sh and install-status.sh do: the start
// decision's one line in 90_start-install (yellow while waiting, green once
// installing, red when the install cannot proceed) and the host config
// failures, one line per host, under "Installation cannot proceed:" in
// 80_host-config, cleared when there are none.
func ShowInstallStatus(ctx context.Context, b *issue.Board, status string, failures []string) error {
	color := issue.Yellow
	switch {
	case strings.HasPrefix(status, "Cluster installation"), strings.HasPrefix(status, "Cluster is installed"):
		color = issue.Green
	case strings.HasPrefix(status, "Installation cannot proceed"), strings.HasPrefix(status, "Starting the installation failed"):
		color = issue.LightRed
	}
	_, err := b.Set(ctx, issue.KeyStartInstall, color, status)
	var lines []string
	for _, f := range failures {
		if f = strings.TrimSpace(f); f != "" {
			lines = append(lines, f)
		}
	}
	if len(lines) == 0 {
		return errors.Join(err, b.Clear(ctx, issue.KeyHostConfig))
	}
	_, herr := b.Set(ctx, issue.KeyHostConfig, issue.LightRed, append([]string{"Installation cannot proceed:"}, lines...)...)
	return errors.Join(err, herr)
}
