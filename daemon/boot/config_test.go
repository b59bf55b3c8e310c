package boot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/onhost"
)

func writeImage(t *testing.T, path, release string) {
	t.Helper()
	b, err := configimage.Build([]configimage.Member{
		{Path: "/etc", Mode: os.ModeDir | 0o755},
		{Path: "/etc/assisted", Mode: os.ModeDir | 0o755},
		{Path: "/etc/assisted/manifests", Mode: os.ModeDir | 0o755},
		{Path: configimage.ClusterImageSetPath, Mode: 0o644, Data: []byte("spec:\n  releaseImage: " + release + "\n")},
		{Path: onhost.RendezvousEnvPath, Mode: 0o644, Data: []byte("NODE_ZERO_IP=192.168.111.20\n")},
	}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConfigWait: a host asks for a config image, refuses one made for
// another release and says why, then takes the right one when it is
// swapped in, and clears both messages.
func TestConfigWait(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc/assisted/manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, configimage.ClusterImageSetPath), []byte("spec:\n  releaseImage: quay.io/r:4.20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "config.iso")
	writeImage(t, img, "quay.io/r:4.19")
	board := issue.NewBoard(root)
	var looks atomic.Int32
	w := ConfigWait{
		Root: root, Board: board, Interval: time.Millisecond,
		Images: func() ([]string, error) {
			if looks.Add(1) == 5 {
				writeImage(t, img, "quay.io/r:4.20") // the person swaps the medium
			}
			return []string{img}, nil
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var shown []string // every 95_load_config_image text, read as agetty would on reload
	board.Reload = func(context.Context) error {
		if b, err := os.ReadFile(filepath.Join(root, "etc/issue.d/95_load_config_image.issue")); err == nil {
			shown = append(shown, string(b))
		}
		return nil
	}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(shown) == 0 || !strings.Contains(shown[0], msgReleaseMismatch) {
		t.Errorf("release mismatch shown as %q, want %q", shown, msgReleaseMismatch)
	}
	if ok, _ := Configured(root); !ok {
		t.Fatal("Run returned without the configuration")
	}
	if e := board.Entries(); len(e) != 0 {
		t.Errorf("statuses left after loading: %+v", e)
	}
	for _, p := range []string{"etc/issue.d/60-check-config-image.issue", "etc/issue.d/95_load_config_image.issue"} {
		if _, err := os.Stat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want cleared", p, err)
		}
	}
}

func TestConfigWaitConfiguredReturnsAtOnce(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc/assisted"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, onhost.RendezvousEnvPath), []byte("NODE_ZERO_IP=10.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := ConfigWait{Root: root, Board: issue.NewBoard(root), Images: func() ([]string, error) {
		t.Error("a configured host looked for config images")
		return nil, nil
	}}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/issue.d")); !os.IsNotExist(err) {
		t.Error("a configured host wrote console status")
	}
}
