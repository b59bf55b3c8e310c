package issue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/nodezero/nodezero/internal/atomicfile"
)

// Key names one status file; the number orders it on the console.
type Key string

// ABI's keys (docs/reference/abi-on-host.md §5).
const (
	KeyReleaseImage     Key = "50_release-image"
	KeyNetwork          Key = "55_network" // nodezero's own: static network failures
	KeyRendezvousHost   Key = "60-rendezvous-host"
	KeyCheckConfigImage Key = "60-check-config-image"
	KeyToken            Key = "65_token"
	KeyAgentServices    Key = "70_agent-services"
	KeyHostConfig       Key = "80_host-config"
	KeyStartInstall     Key = "90_start-install"
	KeyAddNode          Key = "90_add-node" // day 2: the added host's own install (add-node.sh)
	KeyLoadConfigImage  Key = "95_load_config_image"
)

// Color is an agetty colour name for the \e{name} escape.
type Color string

// The colours ABI's messages use.
const (
	None       Color = ""
	LightRed   Color = "lightred"
	Yellow     Color = "yellow"
	Cyan       Color = "cyan"
	Green      Color = "green"
	LightGreen Color = "lightgreen"
)

// Where the files go, under the board's root.
const (
	IssueDir = "/etc/issue.d"
	MotdDir  = "/etc/motd.d"
)

// Entry is one status: its colour and lines.
type Entry struct {
	Key   Key
	Color Color
	Lines []string
}

// Board is the set of status files of one host root. It is safe for
// concurrent use.
type Board struct {
	root string
	// Reload runs after each change; nil does nothing. NewBoard sets it to
	// agetty --reload for the live root when agetty is installed.
	Reload func(context.Context) error

	mu      sync.Mutex
	entries map[Key]Entry
}

// NewBoard returns the board of root ("/" for the live host). Only the
// live host's agetty is reloaded.
func NewBoard(root string) *Board {
	b := &Board{root: root, entries: map[Key]Entry{}}
	if filepath.Clean(root) == "/" {
		if p, err := exec.LookPath("agetty"); err == nil {
			b.Reload = func(ctx context.Context) error {
				out, err := exec.CommandContext(ctx, p, "--reload").CombinedOutput()
				if err != nil {
					return fmt.Errorf("agetty --reload: %w: %s", err, bytes.TrimSpace(out))
				}
				return nil
			}
		}
	}
	return b
}

// Set shows lines under key, coloured; it writes and reloads only when
// the text differs from what the files hold. It reports whether anything
// changed.
func (b *Board) Set(ctx context.Context, key Key, color Color, lines ...string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.entries[key] = Entry{Key: key, Color: color, Lines: append([]string(nil), lines...)}
	c1, err := b.write(filepath.Join(IssueDir, string(key)+".issue"), issueText(color, lines))
	if err != nil {
		return c1, err
	}
	c2, err := b.write(filepath.Join(MotdDir, string(key)), plainText(lines))
	if err != nil {
		return c1 || c2, err
	}
	if (c1 || c2) && b.Reload != nil {
		return true, b.Reload(ctx)
	}
	return c1 || c2, nil
}

// Clear removes key's status; it reloads only when a file was removed.
func (b *Board) Clear(ctx context.Context, key Key) error {
	if err := checkKey(key); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, key)
	removed := false
	for _, p := range []string{filepath.Join(IssueDir, string(key)+".issue"), filepath.Join(MotdDir, string(key))} {
		err := os.Remove(filepath.Join(b.root, p))
		switch {
		case err == nil:
			removed = true
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("clear status %s: %w", key, err)
		}
	}
	if removed && b.Reload != nil {
		return b.Reload(ctx)
	}
	return nil
}

// Entries returns what the board shows, in console order.
func (b *Board) Entries() []Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Entry, 0, len(b.entries))
	for _, e := range b.entries {
		e.Lines = append([]string(nil), e.Lines...)
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// issueText is ABI's set_issue format: a blank line, the text, a blank
// line; the colour wraps the text.
func issueText(color Color, lines []string) []byte {
	text := strings.Join(lines, "\n")
	if color != None {
		text = `\e{` + string(color) + `}` + text + `\e{reset}`
	}
	return []byte("\n" + text + "\n\n")
}

func plainText(lines []string) []byte {
	return []byte(strings.Join(lines, "\n") + "\n")
}

// write replaces name under the root with data unless it holds it
// already.
func (b *Board) write(name string, data []byte) (bool, error) {
	path := filepath.Join(b.root, name)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return false, fmt.Errorf("status: %w", err)
	}
	return true, nil
}

var keyRE = regexp.MustCompile(`^[0-9]{2}[-_][A-Za-z0-9_-]+$`)

func checkKey(k Key) error {
	if !keyRE.MatchString(string(k)) {
		return fmt.Errorf("status key %q: want two digits, a dash or underscore and a name", k)
	}
	return nil
}
