package hostagent

import (
	"testing"
	"time"
)

func TestLogLimiter(t *testing.T) {
	l := newLogLimiter(30 * time.Second)
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	steps := []struct {
		name       string
		at         time.Duration
		key, msg   string
		want       bool
		suppressed int
	}{
		{"first", 0, "register", "connection refused", true, 0},
		{"repeat", time.Second, "register", "connection refused", false, 0},
		{"repeat again", 2 * time.Second, "register", "connection refused", false, 0},
		{"other key", 2 * time.Second, "next-steps", "connection refused", true, 0},
		{"new message", 3 * time.Second, "register", "503", true, 2},
		{"window passed", 40 * time.Second, "register", "503", true, 0},
	}
	for _, s := range steps {
		ok, n := l.allow(s.key, s.msg, t0.Add(s.at))
		if ok != s.want || n != s.suppressed {
			t.Errorf("%s: allow = %v, %d; want %v, %d", s.name, ok, n, s.want, s.suppressed)
		}
	}
	l.forget("register")
	if ok, _ := l.allow("register", "503", t0.Add(41*time.Second)); !ok {
		t.Error("allow after forget = false, want true")
	}
}
