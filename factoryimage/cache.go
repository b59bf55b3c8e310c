package factoryimage

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// recipes name each layer's recipe; one changes whenever its layer's
// recipe changes in a way no other input shows (a command's flags, a
// layout, a tool), so a new recipe never reuses an old entry.
var recipes = map[string]string{
	LayerRootfs:  "rootfs/1",
	LayerOSImage: "os-image/2", // 2: zstd's CLI compresses the image
	LayerFactory: "factory/1",
}

// key is a layer's cache key: the SHA-256 of every input, each a name and
// a value, length-prefixed so that no two input lists hash alike.
type key struct{ h hash.Hash }

func newKey(layer string) *key {
	k := &key{h: sha256.New()}
	k.add("layer", layer)
	k.add("recipe", recipes[layer])
	return k
}

func (k *key) add(name, value string) {
	for _, s := range []string{name, value} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		k.h.Write(n[:])
		io.WriteString(k.h, s)
	}
}

func (k *key) sum() string { return hex.EncodeToString(k.h.Sum(nil)) }

// fileDigest is the hex SHA-256 of a file's bytes.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// entry is one layer in the cache: <cache>/<layer>-<first 16 hex digits of
// its key>/, complete once its info file is there.
type entry struct {
	layer, key string
	dir        string
	lock       *os.File
}

// infoFile marks a complete entry and says how it was made.
const infoFile = "layer.json"

// layerInfo is infoFile's content.
type layerInfo struct {
	Layer    string        `json:"layer"`
	Key      string        `json:"key"`
	Built    time.Time     `json:"built"`
	Duration time.Duration `json:"duration_ns"`
	// Files are the entry's outputs and their apparent sizes.
	Files map[string]int64 `json:"files,omitempty"`
}

// openEntry opens the layer's entry for a build: shared while it is
// complete (any number of builds read it; pruning, which needs it
// exclusively, leaves it be), exclusive while it is not (one builder per
// key; other keys build in parallel). It reports whether the entry is
// complete; when not, the caller builds it and calls done. The caller
// closes it when its build is over.
func openEntry(cache, layer, k string) (*entry, *layerInfo, error) {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, nil, fmt.Errorf("cache: %w", err)
	}
	name := layer + "-" + k[:16]
	lock, err := os.OpenFile(filepath.Join(cache, name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("cache: %w", err)
	}
	e := &entry{layer: layer, key: k, dir: filepath.Join(cache, name), lock: lock}
	for _, how := range []int{syscall.LOCK_SH, syscall.LOCK_EX} {
		if err := syscall.Flock(int(lock.Fd()), how); err != nil {
			e.close()
			return nil, nil, fmt.Errorf("cache: lock %s: %w", lock.Name(), err)
		}
		info, err := e.info()
		if err != nil {
			e.close()
			return nil, nil, err
		}
		if info != nil {
			// The info file's mtime is the entry's last use, which
			// pruning reads.
			now := time.Now()
			os.Chtimes(filepath.Join(e.dir, infoFile), now, now)
			return e, info, e.shared()
		}
	}
	return e, nil, nil // exclusive: build it
}

// shared turns the entry's lock shared: a complete entry is only read.
func (e *entry) shared() error {
	if err := syscall.Flock(int(e.lock.Fd()), syscall.LOCK_SH); err != nil {
		e.close()
		return fmt.Errorf("cache: lock %s: %w", e.lock.Name(), err)
	}
	return nil
}

func (e *entry) info() (*layerInfo, error) {
	b, err := os.ReadFile(filepath.Join(e.dir, infoFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	var info layerInfo
	if err := json.Unmarshal(b, &info); err != nil || info.Key != e.key {
		// A damaged entry is rebuilt, not trusted.
		return nil, nil
	}
	return &info, nil
}

// begin empties the entry's folder for a build.
func (e *entry) begin() error {
	if err := removeAll(e.dir); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// commit marks the entry complete and lets other builds read it.
func (e *entry) commit(info *layerInfo) error {
	info.Layer, info.Key = e.layer, e.key
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(e.dir, infoFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(e.dir, infoFile)); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return e.shared()
}

func (e *entry) close() {
	if e.lock != nil {
		e.lock.Close() // releases the flock
		e.lock = nil
	}
}

// path is a file of the entry.
func (e *entry) path(name string) string { return filepath.Join(e.dir, name) }

// prune removes the entries of layer beyond the keep most recently used,
// skipping any another build holds. The cache would otherwise grow by an
// image per nodezero binary.
func prune(cache, layer string, keep int, log io.Writer) {
	ents, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	type used struct {
		name string
		at   time.Time
	}
	var list []used
	for _, d := range ents {
		if !d.IsDir() || !strings.HasPrefix(d.Name(), layer+"-") || len(d.Name()) != len(layer)+17 {
			continue
		}
		at := time.Time{}
		if st, err := os.Stat(filepath.Join(cache, d.Name(), infoFile)); err == nil {
			at = st.ModTime()
		}
		list = append(list, used{d.Name(), at})
	}
	slices.SortFunc(list, func(a, b used) int { return b.at.Compare(a.at) })
	for i, u := range list {
		if i < keep {
			continue
		}
		lock, err := os.OpenFile(filepath.Join(cache, u.name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			continue
		}
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			if err := removeAll(filepath.Join(cache, u.name)); err == nil {
				// The lock file stays: a builder may be waiting on it.
				fmt.Fprintf(log, "factory image: cache: removed %s (unused since %s)\n", u.name, u.at.Format(time.DateTime))
			}
		}
		lock.Close()
	}
}

// removeAll is os.RemoveAll for a folder of the cache, but it refuses a
// folder with anything mounted below it (a failed mmdebstrap could leave
// its /proc, /sys or /dev mounts behind, and removing through a bind mount
// would remove the machine's own files). Read-only folders of a root tree
// are made writable first.
func removeAll(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if m := mountsUnder(abs); len(m) > 0 {
		return fmt.Errorf("not removing %s: %s mounted inside it (umount them first)", abs, strings.Join(m, ", "))
	}
	if err := os.RemoveAll(abs); err == nil {
		return nil
	}
	filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(abs)
}

// mountsUnder lists the mount points inside dir (/proc/self/mountinfo's
// fifth field, with its octal escapes).
func mountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	return out
}

// unescapeMount undoes mountinfo's \ooo escapes (space, tab, newline,
// backslash).
func unescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
