// Package journal is a log/slog handler that writes structured entries to
// systemd-journald over its native protocol, so that `journalctl -u
// nodezero` shows each entry with its priority and its attributes as
// journal fields (STAGE=network, HOST_ID=…), filterable with
// `journalctl STAGE=network`.
//
// Under systemd, Use tells whether stderr is the journal (JOURNAL_STREAM);
// elsewhere logs stay text on stderr. When journald refuses an entry (too
// big, socket gone) the entry goes to the fallback handler instead, so
// nothing is lost. It imports no project package.
package journal

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
)

// Socket is journald's native socket.
const Socket = "/run/systemd/journal/socket"

// Use reports whether stderr is connected to the journal, as systemd says
// through JOURNAL_STREAM for services with StandardError=journal.
func Use() bool {
	ok, err := sdjournal.StderrIsJournalStream()
	return err == nil && ok
}

// Handler sends entries to journald.
type Handler struct {
	out      *sender
	level    slog.Leveler
	ident    string
	fallback slog.Handler
	prefix   string   // the open groups, as FIELD_ prefix
	attrs    []string // preformatted fields from WithAttrs
}

type sender struct {
	path string
	mu   sync.Mutex
	conn *net.UnixConn
}

// Options configure a Handler.
type Options struct {
	Socket     string       // default Socket
	Level      slog.Leveler // default Info
	Identifier string       // SYSLOG_IDENTIFIER, default "nodezero"
	Fallback   slog.Handler // where entries journald refuses go; nil = dropped
}

// NewHandler returns a handler writing to journald at o.Socket.
func NewHandler(o Options) *Handler {
	if o.Socket == "" {
		o.Socket = Socket
	}
	if o.Level == nil {
		o.Level = slog.LevelInfo
	}
	if o.Identifier == "" {
		o.Identifier = "nodezero"
	}
	return &Handler{out: &sender{path: o.Socket}, level: o.Level, ident: o.Identifier, fallback: o.Fallback}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	var b bytes.Buffer
	field(&b, "MESSAGE", r.Message)
	field(&b, "PRIORITY", fmt.Sprint(priority(r.Level)))
	field(&b, "SYSLOG_IDENTIFIER", h.ident)
	if !r.Time.IsZero() {
		field(&b, "SYSLOG_TIMESTAMP", r.Time.UTC().Format(time.RFC3339Nano))
	}
	for _, a := range h.attrs {
		b.WriteString(a)
	}
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.prefix, a)
		return true
	})
	if err := h.out.send(b.Bytes()); err != nil {
		if h.fallback != nil {
			return h.fallback.Handle(ctx, r)
		}
		return err
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]string(nil), h.attrs...)
	for _, a := range as {
		var b bytes.Buffer
		appendAttr(&b, h.prefix, a)
		c.attrs = append(c.attrs, b.String())
	}
	if h.fallback != nil {
		c.fallback = h.fallback.WithAttrs(as)
	}
	return &c
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix = h.prefix + fieldName(name) + "_"
	if h.fallback != nil {
		c.fallback = h.fallback.WithGroup(name)
	}
	return &c
}

func appendAttr(b *bytes.Buffer, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += fieldName(a.Key) + "_"
		}
		for _, g := range v.Group() {
			appendAttr(b, p, g)
		}
		return
	}
	if a.Key == "" {
		return
	}
	field(b, prefix+fieldName(a.Key), v.String())
}

// field appends one field in journald's native format: KEY=value, or for
// values holding a newline, KEY, a newline, the 64-bit little-endian length
// and the raw value.
func field(b *bytes.Buffer, key, value string) {
	if !strings.ContainsRune(value, '\n') {
		b.WriteString(key)
		b.WriteByte('=')
		b.WriteString(value)
		b.WriteByte('\n')
		return
	}
	b.WriteString(key)
	b.WriteByte('\n')
	_ = binary.Write(b, binary.LittleEndian, uint64(len(value)))
	b.WriteString(value)
	b.WriteByte('\n')
}

// fieldName turns an attribute key into a journal field name: upper case
// letters, digits and underscores, not starting with an underscore or a
// digit (those are journald's own or invalid), at most 64 characters.
func fieldName(key string) string {
	var b strings.Builder
	for _, r := range key {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), "_")
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "F_" + s
	}
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// priority maps slog levels to syslog priorities.
func priority(l slog.Level) int {
	switch {
	case l >= slog.LevelError:
		return 3 // err
	case l >= slog.LevelWarn:
		return 4 // warning
	case l >= slog.LevelInfo:
		return 6 // info
	default:
		return 7 // debug
	}
}

func (s *sender) send(p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: s.path, Net: "unixgram"})
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		s.conn = c
	}
	if _, err := s.conn.Write(p); err != nil {
		// journald restarted or the entry is too big: start over next time.
		s.conn.Close()
		s.conn = nil
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}
