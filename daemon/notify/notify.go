// Package notify tells systemd how the daemon is doing over the sd_notify
// protocol: READY=1 once it is up, STATUS= with each stage's one-line
// status, and WATCHDOG=1 pings while a health check passes, so that a hung
// daemon is restarted by systemd (nodezero.service has WatchdogSec=).
//
// Outside systemd (no NOTIFY_SOCKET) every call is a no-op. It imports no
// project package.
package notify

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notifier sends sd_notify messages. The zero value is not usable; use New.
type Notifier struct {
	send   func(state string) (bool, error)
	logger *slog.Logger

	mu     sync.Mutex
	status string
	warned bool
}

// New returns a Notifier that sends to $NOTIFY_SOCKET.
func New(logger *slog.Logger) *Notifier {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Notifier{send: func(s string) (bool, error) { return daemon.SdNotify(false, s) }, logger: logger}
}

// Ready says the daemon has started: systemd considers a Type=notify unit
// started from here on.
func (n *Notifier) Ready() { n.notify(daemon.SdNotifyReady) }

// Stopping says the daemon is shutting down.
func (n *Notifier) Stopping() { n.notify(daemon.SdNotifyStopping) }

// Status sets the status line systemctl status shows. Repeats of the same
// line are not sent again.
func (n *Notifier) Status(line string) {
	line = oneLine(line)
	n.mu.Lock()
	same := line == n.status
	n.status = line
	n.mu.Unlock()
	if !same {
		n.notify("STATUS=" + line)
	}
}

// Watchdog pings systemd's watchdog at half the unit's WatchdogSec while
// healthy reports nil, until ctx ends. A failing health check skips the ping
// and is logged, so that systemd restarts a daemon that stays unhealthy for
// a whole watchdog period. Without a watchdog (WATCHDOG_USEC unset) it
// returns at once. healthy may be nil (always healthy).
func (n *Notifier) Watchdog(ctx context.Context, healthy func(context.Context) error) {
	every, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		n.logger.Warn("watchdog settings", "err", err)
		return
	}
	if every <= 0 {
		return
	}
	n.watchdog(ctx, every/2, healthy)
}

func (n *Notifier) watchdog(ctx context.Context, interval time.Duration, healthy func(context.Context) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok := true
		if healthy != nil {
			hctx, cancel := context.WithTimeout(ctx, interval)
			if err := healthy(hctx); err != nil {
				ok = false
				if ctx.Err() == nil {
					n.logger.Warn("health check failed: not pinging the watchdog", "err", err)
				}
			}
			cancel()
		}
		if ok {
			n.notify(daemon.SdNotifyWatchdog)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// notify sends one message. A failure is logged once: the daemon works the
// same without systemd listening, so there is nothing else to do about it.
func (n *Notifier) notify(state string) {
	if _, err := n.send(state); err != nil {
		n.mu.Lock()
		first := !n.warned
		n.warned = true
		n.mu.Unlock()
		if first {
			n.logger.Warn("sd_notify", "err", err)
		}
	}
}

// oneLine keeps a status to one line: sd_notify fields end at a newline.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
