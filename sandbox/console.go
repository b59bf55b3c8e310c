package sandbox

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/nodezero/nodezero/node/console"
	"github.com/nodezero/nodezero/tui"
	"github.com/nodezero/nodezero/wire"
)

// startConsole shows the dashboard, when asked: the progress lines go to
// a log while it owns the terminal, and back to stdout when the person
// leaves it (q). The channel gets the dashboard's end (closed at once
// without one); closeLog closes the log.
func (r *run) startConsole(ctx context.Context, c *wire.Client) (<-chan error, func(), error) {
	done := make(chan error, 1)
	if !r.o.Console {
		close(done)
		return done, func() {}, nil
	}
	f, err := os.Create(filepath.Join(r.o.Dir, "sandbox.log"))
	if err != nil {
		return nil, nil, err
	}
	r.lines.set(f)
	r.consoleUp.Store(true)
	go func() {
		defer r.consoleUp.Store(false)
		err := tui.Run(ctx, tui.Config{
			Mono:   console.MonoWanted("auto"),
			Source: tui.NewHTTPSource(c, ""),
			// r resets a failed cluster; the watch then reboots the hosts
			// into discovery and the install runs again.
			Reset: func(ctx context.Context, id string) error {
				_, err := c.ResetCluster(ctx, id)
				return err
			},
			HostsRebootAfterReset: true,
			NetState: func(context.Context) (tui.NetState, error) {
				st, err := console.NetState(nil, "/")
				st.Shared = "the sandbox's hosts run on this machine's loopback; they have no links of their own"
				return st, err
			},
		})
		r.lines.set(r.o.Stdout)
		done <- err
	}()
	return done, func() { f.Close() }, nil
}

// switchWriter writes to one writer at a time; set changes it.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}
