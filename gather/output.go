package gather

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/internal/atomicfile"
)

// ForRoot returns the options of a gather of the host at root, at now:
// the live host when root is "/" (its journal, the kernel's host name),
// else a test or sandbox host, whose run.log beside its root is collected
// too. The bundle's directory, Options.Dir, is
// agent-gather-HOST-TIME, as ABI's agent-gather names it; the file
// Options.Dir+".tar.gz" is its usual name.
func ForRoot(root, dataDir, since, version string, now time.Time) Options {
	live := root == "/"
	now = now.UTC()
	host := HostName(root, live)
	o := Options{
		Root: root, DataDir: dataDir, Journal: live, Since: since,
		Dir: "agent-gather-" + host + "-" + now.Format("20060102T150405Z"), Host: host, Version: version,
		Now: func() time.Time { return now },
	}
	if !live {
		// A sandbox host's log sits beside its root.
		if p := filepath.Join(filepath.Dir(root), "run.log"); fileExists(p) {
			o.ExtraLogs = append(o.ExtraLogs, p)
		}
	}
	return o
}

// WriteFile writes the bundle to a temporary file beside path and renames
// it into place: a failed gather leaves no half bundle. The bundle is
// 0600: redacted, it still describes the host in detail.
func WriteFile(ctx context.Context, o Options, path string) (*Report, error) {
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, err // a bundle goes into a directory that exists
	}
	var rep *Report
	err := atomicfile.Stream(path, 0o600, func(w io.Writer) error {
		var err error
		rep, err = Write(ctx, o, w)
		return err
	})
	return rep, err
}

// HostName names the host for the bundle's file name: the root's
// /etc/hostname, or the kernel's on the live host, with every character
// but letters, digits, '-' and '.' replaced by '_'.
func HostName(root string, live bool) string {
	name := ""
	if b, err := os.ReadFile(filepath.Join(root, "etc/hostname")); err == nil {
		name = strings.TrimSpace(string(b))
	}
	if name == "" && live {
		name, _ = os.Hostname()
	}
	if name == "" {
		name = "unknown"
	}
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, name)
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
