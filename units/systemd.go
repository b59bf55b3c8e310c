package units

import (
	"context"
	"fmt"
	"os"
	"strconv"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// Systemd asks PID 1 to reload and start units over its D-Bus API
// (org.freedesktop.systemd1.Manager). Callers hold it behind their own
// small interface; tests talk to a stand-in manager on a private bus.
type Systemd struct {
	conn *sddbus.Conn
}

// JobError is a start job that ended in a result other than "done":
// canceled, timeout, failed, dependency or skipped (org.freedesktop.systemd1
// JobRemoved).
type JobError struct {
	Unit, Result string
}

func (e *JobError) Error() string {
	return fmt.Sprintf("units: start %s: job %s", e.Unit, e.Result)
}

// DialSystem connects to systemd on the system bus and, when that is not
// up and we are root, on systemd's private socket.
func DialSystem(ctx context.Context) (*Systemd, error) {
	conn, err := sddbus.NewWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("units: connect to systemd: %w", err)
	}
	return newSystemd(conn)
}

// DialBus connects to the systemd manager reachable on the D-Bus bus at
// address (e.g. "unix:path=/run/dbus/system_bus_socket").
func DialBus(ctx context.Context, address string) (*Systemd, error) {
	conn, err := sddbus.NewConnection(func() (*dbus.Conn, error) {
		c, err := dbus.Dial(address, dbus.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		// EXTERNAL with the numeric uid, as go-systemd does: no user
		// name lookup, which a static binary cannot do.
		if err := c.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Getuid()))}); err != nil {
			c.Close()
			return nil, err
		}
		if err := c.Hello(); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	})
	if err != nil {
		return nil, fmt.Errorf("units: connect to systemd on %s: %w", address, err)
	}
	return newSystemd(conn)
}

// newSystemd subscribes to the manager's signals: systemd sends JobRemoved,
// which tells Start its job's result, only while some client is subscribed.
func newSystemd(conn *sddbus.Conn) (*Systemd, error) {
	if err := conn.Subscribe(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("units: subscribe to systemd signals: %w", err)
	}
	return &Systemd{conn: conn}, nil
}

// Reload is `systemctl daemon-reload`: systemd rereads unit files and
// enablement links.
func (s *Systemd) Reload(ctx context.Context) error {
	if err := s.conn.ReloadContext(ctx); err != nil {
		return fmt.Errorf("units: reload systemd: %w", err)
	}
	return nil
}

// Start is `systemctl start name`: it queues a start job (mode "replace")
// and waits until the job is over. A job that does not end "done" is a
// *JobError. For a Type=notify unit the job ends when the service reports
// READY=1 or its start timeout passes.
func (s *Systemd) Start(ctx context.Context, name string) error {
	// Buffered: go-systemd sends the result while holding its job lock,
	// and we may have gone on ctx.Done.
	ch := make(chan string, 1)
	if _, err := s.conn.StartUnitContext(ctx, name, "replace", ch); err != nil {
		return fmt.Errorf("units: start %s: %w", name, err)
	}
	select {
	case res := <-ch:
		if res != "done" {
			return &JobError{Unit: name, Result: res}
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("units: start %s: waiting for the job: %w", name, ctx.Err())
	}
}

// Close ends the connection.
func (s *Systemd) Close() {
	s.conn.Close()
}
