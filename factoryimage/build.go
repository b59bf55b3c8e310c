package factoryimage

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
)

// Layer names, as the cache's folders and Result.Layers name them.
const (
	LayerRootfs  = "rootfs"
	LayerOSImage = "os-image"
	LayerFactory = "factory"
)

// Result says what Build made.
type Result struct {
	// Raw and QCOW2 are the factory image in Options.Dir: the raw GPT
	// disk and its zstd-compressed qcow2 (a read-only backing file).
	Raw, QCOW2 string
	// OSImage and OSImageCompressed are the installed OS in the cache:
	// its raw disk and the os.img.zst the payload carries.
	OSImage, OSImageCompressed string
	// Payload is payload.json as laid into the factory image.
	Payload diskwrite.Payload
	// Key is the factory layer's key: equal keys, equal images.
	Key    string
	Layers []Layer
	// Sizes in bytes: the raw files' apparent sizes and what the factory
	// raw file really holds (it is sparse).
	RawSize, RawAllocated, QCOW2Size, OSImageSize, OSImageCompressedSize int64
	Duration                                                             time.Duration
}

// Layer is one layer of a build.
type Layer struct {
	Name string
	Key  string
	// Cached: the layer came from the cache; Built and BuildTime say when
	// and in how long it was made.
	Cached    bool
	Built     time.Time
	BuildTime time.Duration
	// Dir is the layer's folder in the cache.
	Dir string
}

// inputDigests are the input files' SHA-256s.
type inputDigests struct{ binary, ignition string }

// keepEntries is how many entries of the os-image and factory layers the
// cache keeps (the most recently used); rootfs entries are kept twice over.
const keepEntries = 3

// Build makes the factory image in o.Dir (RawFile, QCOW2File), reusing
// every cached layer whose inputs are unchanged. Progress and the tools'
// output go to o.Log.
func Build(ctx context.Context, opts Options) (*Result, error) {
	start := time.Now()
	if opts.Base != "" {
		return nil, CheckBase(ctx, opts.Base)
	}
	if euid := os.Geteuid(); euid != 0 {
		return nil, fmt.Errorf("factory image: needs root (running as uid %d): mmdebstrap --mode=root builds the Debian tree, whose files root owns and only root may read", euid)
	}
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	if err := checkTools(); err != nil {
		return nil, err
	}
	if err := o.Payload.CheckReleaseImages(); err != nil {
		return nil, fmt.Errorf("factory image: %w", err)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("factory image: %w", err)
	}
	var d inputDigests
	if d.binary, err = fileDigest(o.Binary); err != nil {
		return nil, fmt.Errorf("factory image: nodezero binary: %w", err)
	}
	if d.ignition, err = fileDigest(o.Ignition); err != nil {
		return nil, fmt.Errorf("factory image: ignition: %w", err)
	}
	res := &Result{}
	var open []*entry
	defer func() {
		for _, e := range open {
			e.close()
		}
	}()
	layer := func(name, k string, build func(*entry) error) (*entry, error) {
		t := time.Now()
		e, info, err := openEntry(o.Cache, name, k)
		if err != nil {
			return nil, fmt.Errorf("factory image: %s: %w", name, err)
		}
		open = append(open, e)
		l := Layer{Name: name, Key: k, Dir: e.dir}
		if info != nil {
			l.Cached, l.Built, l.BuildTime = true, info.Built, info.Duration
			fmt.Fprintf(o.Log, "factory image: %s: cached (%s, built %s)\n", name, e.dir, info.Built.Local().Format(time.DateTime))
		} else {
			fmt.Fprintf(o.Log, "factory image: %s: building into %s\n", name, e.dir)
			if err := e.begin(); err != nil {
				return nil, fmt.Errorf("factory image: %s: %w", name, err)
			}
			if err := build(e); err != nil {
				removeAll(e.dir)
				return nil, fmt.Errorf("factory image: %s: %w", name, err)
			}
			l.Built, l.BuildTime = time.Now(), time.Since(t)
			if err := e.commit(&layerInfo{Built: l.Built, Duration: l.BuildTime}); err != nil {
				return nil, fmt.Errorf("factory image: %s: %w", name, err)
			}
			fmt.Fprintf(o.Log, "factory image: %s: built in %s\n", name, round(l.BuildTime))
		}
		res.Layers = append(res.Layers, l)
		return e, nil
	}

	rootKey := rootfsKey(o)
	rootfs, err := layer(LayerRootfs, rootKey, func(e *entry) error {
		fmt.Fprintf(o.Log, "factory image: rootfs: mmdebstrap %s from %s (about 5 min)\n", Suite, o.Mirror)
		return buildRootfs(ctx, o, e)
	})
	if err != nil {
		return nil, err
	}
	tree := rootfs.path(rootfsTree)

	osKey := osImageKey(o, rootKey, d)
	var img diskwrite.Image
	osEntry, err := layer(LayerOSImage, osKey, func(e *entry) error {
		var err error
		if img, err = buildOSImage(ctx, o, tree, e); err != nil {
			return err
		}
		return writeJSON(e.path("image.json"), img)
	})
	if err != nil {
		return nil, err
	}
	if img.File == "" {
		if err := readJSON(osEntry.path("image.json"), &img); err != nil {
			return nil, fmt.Errorf("factory image: %s: %w", LayerOSImage, err)
		}
	}

	fk, err := factoryKey(o, rootKey, osKey, d)
	if err != nil {
		return nil, err
	}
	fac, err := layer(LayerFactory, fk, func(e *entry) error {
		return buildFactory(ctx, o, tree, osEntry, img, e)
	})
	if err != nil {
		return nil, err
	}

	res.Key = fk
	res.OSImage, res.OSImageCompressed = osEntry.path(osImageRaw), osEntry.path(img.File)
	res.Payload = o.Payload
	res.Payload.OS, res.Payload.Dir = img, ""
	res.Raw, res.QCOW2 = filepath.Join(o.Dir, RawFile), filepath.Join(o.Dir, QCOW2File)
	for _, c := range []struct{ src, dst string }{{fac.path(RawFile), res.Raw}, {fac.path(QCOW2File), res.QCOW2}} {
		if err := copyOut(ctx, o, c.src, c.dst); err != nil {
			return nil, fmt.Errorf("factory image: %w", err)
		}
	}
	for _, s := range []struct {
		path      string
		size, use *int64
	}{
		{res.Raw, &res.RawSize, &res.RawAllocated},
		{res.QCOW2, &res.QCOW2Size, nil},
		{res.OSImage, &res.OSImageSize, nil},
		{res.OSImageCompressed, &res.OSImageCompressedSize, nil},
	} {
		st, err := os.Stat(s.path)
		if err != nil {
			return nil, fmt.Errorf("factory image: %w", err)
		}
		*s.size = st.Size()
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && s.use != nil {
			*s.use = sys.Blocks * 512
		}
	}
	prune(o.Cache, LayerFactory, keepEntries, o.Log)
	prune(o.Cache, LayerOSImage, keepEntries, o.Log)
	prune(o.Cache, LayerRootfs, 2*keepEntries, o.Log)
	res.Duration = time.Since(start)
	return res, nil
}

// copyOut copies a cached file into the output folder, sparsely (a
// reflink where the filesystem can), through a temporary name.
func copyOut(ctx context.Context, o *resolved, src, dst string) error {
	tmp := dst + ".tmp"
	os.Remove(tmp)
	if err := run(ctx, o.Log, nil, "cp", "--sparse=always", "--reflink=auto", src, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Summary is what `nodezero create factory-image` prints: the files made,
// their sizes, and each layer's time and whether it came from the cache.
func (r *Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "wrote %s (%s, %s allocated) and %s (%s) in %s\n",
		r.Raw, humanBytes(r.RawSize), humanBytes(r.RawAllocated), r.QCOW2, humanBytes(r.QCOW2Size), round(r.Duration))
	for _, l := range r.Layers {
		how := fmt.Sprintf("built in %s", round(l.BuildTime))
		if l.Cached {
			how = fmt.Sprintf("from the cache (built %s in %s)", l.Built.Local().Format(time.DateTime), round(l.BuildTime))
		}
		fmt.Fprintf(&b, "  %-9s %s, key %s, %s\n", l.Name, how, l.Key[:16], l.Dir)
	}
	fmt.Fprintf(&b, "  installed OS: %s (%s raw), %s as %s in the payload (%s), sha256 %s\n",
		r.OSImage, humanBytes(r.OSImageSize), r.Payload.OS.File, humanBytes(r.OSImageCompressedSize),
		diskwrite.DefaultPayloadDir, r.Payload.OS.SHA256)
	return b.String()
}

// humanBytes says n in MiB (or KiB below one).
func humanBytes(n int64) string {
	if n < mib {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/mib)
}
