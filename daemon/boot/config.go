package boot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/onhost"
)

// ConfigImageLabel is the volume label of a config image.
const ConfigImageLabel = "agent_configimage"

// NoConfigImagePath, when present, tells the host to ignore config images
// (the interactive flow configures it from the console instead).
const NoConfigImagePath = "/etc/assisted/no-config-image"

// Status lines of the config stage (ABI's texts).
const (
	msgInsertConfigImage = "Insert or mount config image to start cluster installation"
	msgReleaseMismatch   = "Installation cannot proceed: cluster-image-set in archive does not match current release"
)

// ConfigWait is the first stage: it returns once the host root holds
// /etc/assisted/rendezvous-host.env, loading a config image that appears
// meanwhile. Until then the console asks for one (60-check-config-image);
// an image that cannot be taken is explained (95_load_config_image) and
// retried, so swapping the medium recovers.
type ConfigWait struct {
	Root string
	// Images lists the candidate config images: block devices labelled
	// agent_configimage (SystemImages) or files given by hand.
	Images func() ([]string, error)
	Board  *issue.Board
	Limits configimage.Limits
	// Interval between looks (5 s as load-config-iso.sh; 0: that).
	Interval time.Duration
	Logger   *slog.Logger
}

// SystemImages lists the machine's block devices labelled
// agent_configimage: what the udev rule triggers on.
func SystemImages() ([]string, error) { return configimage.FindByLabel("/", ConfigImageLabel) }

// Configured reports whether root holds the configuration.
func Configured(root string) (bool, error) {
	_, err := os.Stat(filepath.Join(root, onhost.RendezvousEnvPath))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("config: %w", err)
}

// Run waits for the configuration.
func (c ConfigWait) Run(ctx context.Context) error {
	if c.Interval <= 0 {
		c.Interval = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	asked := false
	for {
		ok, err := Configured(c.Root)
		if err != nil {
			return err
		}
		if ok {
			if asked {
				if err := c.Board.Clear(ctx, issue.KeyCheckConfigImage); err != nil {
					c.Logger.Warn("clearing the config image status", "err", err)
				}
			}
			return nil
		}
		if !asked {
			if _, err := c.Board.Set(ctx, issue.KeyCheckConfigImage, issue.LightRed, msgInsertConfigImage); err != nil {
				c.Logger.Warn("console status", "err", err)
			}
			asked = true
		}
		if err := c.tryImages(ctx); err != nil {
			return err
		}
		if ok, err := Configured(c.Root); err != nil || ok {
			continue
		}
		t := time.NewTimer(c.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// tryImages loads the first candidate image that can be taken. Problems
// with an image go to the console and the log, never end the wait: the
// person at the host can insert another.
func (c ConfigWait) tryImages(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(c.Root, NoConfigImagePath)); err == nil {
		return nil
	}
	if c.Images == nil {
		return nil
	}
	paths, err := c.Images()
	if err != nil {
		c.Logger.Warn("looking for config images", "err", err)
		return nil
	}
	for _, p := range paths {
		err := loadImage(p, c.Root, c.Limits)
		if err == nil {
			c.Logger.Info("config image loaded", "image", p)
			if err := c.Board.Clear(ctx, issue.KeyLoadConfigImage); err != nil {
				c.Logger.Warn("console status", "err", err)
			}
			return nil
		}
		c.Logger.Warn("config image not loaded", "image", p, "err", err)
		msg := "Installation cannot proceed: config image " + p + ": " + err.Error()
		if errors.Is(err, configimage.ErrReleaseMismatch) {
			msg = msgReleaseMismatch
		}
		if _, serr := c.Board.Set(ctx, issue.KeyLoadConfigImage, issue.LightRed, msg); serr != nil {
			c.Logger.Warn("console status", "err", serr)
		}
	}
	return nil
}

func loadImage(path, root string, lim configimage.Limits) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := deviceSize(f)
	if err != nil {
		return err
	}
	_, err = configimage.Load(f, size, root, lim)
	return err
}

// deviceSize is a file's size, or a block device's (its Stat size is 0).
func deviceSize(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if fi.Mode().IsRegular() {
		return fi.Size(), nil
	}
	n, err := f.Seek(0, 2)
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", f.Name(), err)
	}
	return n, nil
}
