package api_test

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/nodezero/nodezero/daemon/api"
)

// TestListenerConnsPerClient: LimitConnsPerClient hands the server limit
// connections from one address and closes the next one itself; a closed
// connection frees its slot; loopback is not counted unless asked; a
// limit of 0 is no limiter.
func TestListenerConnsPerClient(t *testing.T) {
	const limit = 3
	log := slog.New(slog.DiscardHandler)
	listen := func(t *testing.T) net.Listener {
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln
	}
	// dial connects to addr from 127.0.0.2.
	dial := func(t *testing.T, addr string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	t.Run("counted", func(t *testing.T) {
		raw := listen(t)
		ln := api.LimitConnsPerClient(raw, limit, true, log)
		var got []net.Conn
		for range limit {
			dial(t, raw.Addr().String())
			c, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			got = append(got, c)
		}
		// Over the limit: Accept closes the next connection itself and
		// waits for one that fits.
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				t.Error(err)
			}
			accepted <- c
		}()
		over := dial(t, raw.Addr().String())
		_ = over.SetReadDeadline(time.Now().Add(time.Minute))
		if n, err := over.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the connection over the limit: read %d bytes, %v; want it closed", n, err)
		}
		// A closed connection frees its slot, once.
		got[0].Close()
		got[0].Close()
		next := dial(t, raw.Addr().String())
		c := <-accepted
		if c == nil {
			return
		}
		defer c.Close()
		if c.RemoteAddr().String() != next.LocalAddr().String() {
			t.Errorf("accepted %s, want %s (the connection after the refused %s)", c.RemoteAddr(), next.LocalAddr(), over.LocalAddr())
		}
		// The freed slot is taken again: one more is over the limit.
		go func() {
			if c, err := ln.Accept(); err == nil {
				accepted <- c
			}
		}()
		again := dial(t, raw.Addr().String())
		_ = again.SetReadDeadline(time.Now().Add(time.Minute))
		if n, err := again.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("a connection over the limit after a slot was taken again: read %d bytes, %v; want it closed", n, err)
		}
	})
	t.Run("loopback not counted", func(t *testing.T) {
		raw := listen(t)
		ln := api.LimitConnsPerClient(raw, limit, false, log)
		for i := range 2 * limit {
			dial(t, raw.Addr().String())
			c, err := ln.Accept()
			if err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
			defer c.Close()
		}
	})
	t.Run("no limit", func(t *testing.T) {
		raw := listen(t)
		if ln := api.LimitConnsPerClient(raw, 0, true, log); ln != raw {
			t.Errorf("LimitConnsPerClient(ln, 0) = %T, want ln itself", ln)
		}
	})
}
