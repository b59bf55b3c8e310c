package api

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// LimitConnsPerClient returns ln keeping at most limit connections open
// per client IP address (Limits.ConnsPerClient); a connection over it is
// closed as it is accepted, unseen by the server. Loopback clients are
// not counted unless countLoopback. A limit of 0 or less returns ln.
func LimitConnsPerClient(ln net.Listener, limit int, countLoopback bool, log *slog.Logger) net.Listener {
	if limit <= 0 {
		return ln
	}
	return &clientLimiter{Listener: ln, limit: limit, countLoopback: countLoopback, log: log, open: map[netip.Addr]int{}}
}

// clientLimiter is the listener LimitConnsPerClient returns.
type clientLimiter struct {
	net.Listener
	limit         int
	countLoopback bool
	log           *slog.Logger

	mu       sync.Mutex
	open     map[netip.Addr]int
	refused  int       // since the last warning
	warnedAt time.Time // warnings at most once a minute
}

// Accept returns the next connection within its client's limit; those
// over it are closed here, unseen by the server.
func (l *clientLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
		if err != nil {
			return c, nil // not TCP: nothing to count by
		}
		ip := ap.Addr().Unmap()
		if ip.IsLoopback() && !l.countLoopback {
			return c, nil
		}
		if l.take(ip) {
			return &countedConn{Conn: c, release: func() { l.release(ip) }}, nil
		}
		_ = c.Close()
	}
}

func (l *clientLimiter) take(ip netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip] < l.limit {
		l.open[ip]++
		return true
	}
	l.refused++
	if now := time.Now(); now.Sub(l.warnedAt) >= time.Minute {
		l.log.Warn("connections refused: a client is over its limit of open connections",
			"client", ip.String(), "limit", l.limit, "refused", l.refused)
		l.warnedAt, l.refused = now, 0
	}
	return false
}

func (l *clientLimiter) release(ip netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip]--; l.open[ip] <= 0 {
		delete(l.open, ip)
	}
}

// countedConn gives its slot back once, on its first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
