package journal

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// journald is a real unix datagram socket standing where journald listens.
func journald(t *testing.T) (string, *net.UnixConn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.sock")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return path, c
}

// parse decodes one datagram of the native protocol.
func parse(t *testing.T, p []byte) map[string]string {
	t.Helper()
	m := map[string]string{}
	for len(p) > 0 {
		nl := bytes.IndexByte(p, '\n')
		if nl < 0 {
			t.Fatalf("unterminated field %q", p)
		}
		line := p[:nl]
		if eq := bytes.IndexByte(line, '='); eq >= 0 {
			m[string(line[:eq])] = string(line[eq+1:])
			p = p[nl+1:]
			continue
		}
		key := string(line)
		p = p[nl+1:]
		n := binary.LittleEndian.Uint64(p[:8])
		m[key] = string(p[8 : 8+n])
		if p[8+n] != '\n' {
			t.Fatalf("binary field %s not followed by a newline", key)
		}
		p = p[8+n+1:]
	}
	return m
}

func read(t *testing.T, c *net.UnixConn) map[string]string {
	t.Helper()
	buf := make([]byte, 1<<16)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, buf[:n])
}

func TestEntriesWithFields(t *testing.T) {
	path, c := journald(t)
	log := slog.New(NewHandler(Options{Socket: path, Level: slog.LevelDebug}))
	log.With("stage", "network").WithGroup("host").Warn("keyfiles installed", "nic", "enp1s0", "host-dir", "host0")
	got := read(t, c)
	delete(got, "SYSLOG_TIMESTAMP")
	want := map[string]string{
		"MESSAGE": "keyfiles installed", "PRIORITY": "4", "SYSLOG_IDENTIFIER": "nodezero",
		"STAGE": "network", "HOST_NIC": "enp1s0", "HOST_HOST_DIR": "host0",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("fields (-want +got):\n%s", d)
	}

	log.Debug("two\nlines", "err", "a\nb", "_private", 1, "9lives", "x")
	got = read(t, c)
	for k, v := range map[string]string{"MESSAGE": "two\nlines", "PRIORITY": "7", "ERR": "a\nb", "PRIVATE": "1", "F_9LIVES": "x"} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %q)", k, got[k], v, got)
		}
	}
}

func TestLevelFilter(t *testing.T) {
	path, c := journald(t)
	log := slog.New(NewHandler(Options{Socket: path}))
	log.Debug("hidden")
	log.Error("shown")
	if got := read(t, c); got["MESSAGE"] != "shown" || got["PRIORITY"] != "3" {
		t.Fatalf("got %q", got)
	}
}

func TestFallbackWhenJournaldIsGone(t *testing.T) {
	var text strings.Builder
	fb := slog.NewTextHandler(&text, nil)
	log := slog.New(NewHandler(Options{Socket: filepath.Join(t.TempDir(), "absent.sock"), Fallback: fb}))
	log.Info("still logged", "stage", "config")
	if !strings.Contains(text.String(), "still logged") || !strings.Contains(text.String(), "stage=config") {
		t.Fatalf("fallback got %q", text.String())
	}
}
