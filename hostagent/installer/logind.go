package installer

import (
	"context"
	"fmt"
	"time"

	"github.com/godbus/dbus/v5"
)

// logind's bus name, object and manager interface.
const (
	logindName    = "org.freedesktop.login1"
	logindPath    = dbus.ObjectPath("/org/freedesktop/login1")
	logindManager = "org.freedesktop.login1.Manager"
)

// logindRebooter reboots through systemd-logind over D-Bus.
type logindRebooter struct {
	addr string // "" is the system bus
}

// LogindRebooter reboots through systemd-logind on the system bus, as
// shutdown -r does: ScheduleShutdown("reboot", now+delay), or Reboot(false)
// when delay is 0. A host without a system bus gets an error saying so.
func LogindRebooter() Rebooter { return logindRebooter{} }

// LogindRebooterAt is LogindRebooter on the bus at addr (a D-Bus address
// such as "unix:path=/run/dbus/system_bus_socket"); "" is the system bus.
func LogindRebooterAt(addr string) Rebooter { return logindRebooter{addr: addr} }

func (l logindRebooter) Reboot(ctx context.Context, delay time.Duration, message string) error {
	var conn *dbus.Conn
	var err error
	if l.addr == "" {
		conn, err = dbus.ConnectSystemBus(dbus.WithContext(ctx))
		if err != nil {
			return fmt.Errorf("reboot via logind: no system bus: %w", err)
		}
	} else {
		conn, err = dbus.Connect(l.addr, dbus.WithContext(ctx))
		if err != nil {
			return fmt.Errorf("reboot via logind: connect to %s: %w", l.addr, err)
		}
	}
	defer conn.Close()
	mgr := conn.Object(logindName, logindPath)
	if message != "" {
		// Best effort: the wall message only tells logged-in users why;
		// a logind that refuses it reboots all the same.
		_ = mgr.CallWithContext(ctx, logindManager+".SetWallMessage", 0, message, true).Err
	}
	if delay <= 0 {
		if err := mgr.CallWithContext(ctx, logindManager+".Reboot", 0, false).Err; err != nil {
			return fmt.Errorf("reboot via logind: %w", err)
		}
		return nil
	}
	// logind takes the time as CLOCK_REALTIME microseconds.
	at := uint64(time.Now().Add(delay).UnixMicro())
	if err := mgr.CallWithContext(ctx, logindManager+".ScheduleShutdown", 0, "reboot", at).Err; err != nil {
		return fmt.Errorf("reboot via logind: schedule reboot in %s: %w", delay, err)
	}
	return nil
}
