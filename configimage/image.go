package configimage

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"time"

	"github.com/nodezero/nodezero/configimage/cpio"
	"github.com/nodezero/nodezero/configimage/isofs"
	"github.com/nodezero/nodezero/onhost"
)

// The config image (docs/reference/abi-on-host.md §8.3, from the installer's
// pkg/asset/agent/configimage/configiso.go): an ISO 9660 volume labelled
// agent_configimage whose root holds one file, config.gz, a gzip'd newc
// cpio of absolute host paths with /etc/assisted/rendezvous-host.env last,
// because its appearance tells node-zero, agent and
// agent-check-config-image that the configuration is complete.
const (
	VolumeLabel       = "agent_configimage"
	ConfigArchiveName = "config.gz"
)

// Member is one file or directory of the config image, at an absolute,
// clean host path.
type Member struct {
	Path string
	Mode fs.FileMode // fs.ModeDir or a regular file, plus permission bits
	Data []byte
}

// Limits bound what Read accepts. A zero field takes its default.
type Limits struct {
	MaxArchiveSize int64 // bytes of config.gz; default 64 MiB
	MaxMemberSize  int64 // bytes of one member; default 16 MiB
	MaxTotalSize   int64 // bytes of all members; default 64 MiB
	MaxMembers     int   // default 1,000
}

func (l Limits) withDefaults() Limits {
	if l.MaxArchiveSize <= 0 {
		l.MaxArchiveSize = 64 << 20
	}
	if l.MaxMemberSize <= 0 {
		l.MaxMemberSize = 16 << 20
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = 64 << 20
	}
	if l.MaxMembers <= 0 {
		l.MaxMembers = 1000
	}
	return l
}

// Errors a caller can test with errors.Is. Errors of the isofs and cpio
// packages (isofs.ErrLoop, cpio.ErrSymlink, ...) come wrapped as they are.
var (
	ErrWrongLabel        = errors.New("not a config image: wrong volume label")
	ErrNoConfigArchive   = errors.New("config image has no " + ConfigArchiveName)
	ErrCorruptArchive    = errors.New("corrupt " + ConfigArchiveName)
	ErrTooLarge          = errors.New("config image exceeds a limit")
	ErrMemberPath        = errors.New("invalid member path")
	ErrMemberType        = errors.New("invalid member type")
	ErrDuplicateMember   = errors.New("duplicate member")
	ErrRendezvousNotLast = errors.New("the last member must be " + onhost.RendezvousEnvPath)
)

// Build returns the config image of members, in the given order, with
// every timestamp (ISO, gzip header, cpio) set to modTime, so equal inputs
// give equal bytes. The last member must be the regular file
// onhost.RendezvousEnvPath; paths must be absolute and clean.
func Build(members []Member, modTime time.Time) ([]byte, error) {
	if err := checkMembers(members); err != nil {
		return nil, fmt.Errorf("configimage: build: %w", err)
	}
	if n := len(members); n == 0 || members[n-1].Path != onhost.RendezvousEnvPath || !members[n-1].Mode.IsRegular() {
		return nil, fmt.Errorf("configimage: build: %w", ErrRendezvousNotLast)
	}
	var archive bytes.Buffer
	zw, err := gzip.NewWriterLevel(&archive, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	zw.ModTime = modTime // no name: the header holds only this time
	cw := cpio.NewWriter(zw)
	for _, m := range members {
		h := &cpio.Header{Name: m.Path, Mode: m.Mode, ModTime: modTime, Size: int64(len(m.Data))}
		if err := cw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("configimage: build: %w", err)
		}
		if _, err := cw.Write(m.Data); err != nil {
			return nil, fmt.Errorf("configimage: build: %w", err)
		}
	}
	if err := cw.Close(); err != nil {
		return nil, fmt.Errorf("configimage: build: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("configimage: build: gzip: %w", err)
	}
	iw, err := isofs.NewWriter(VolumeLabel, modTime)
	if err != nil {
		return nil, fmt.Errorf("configimage: build: %w", err)
	}
	if err := iw.AddFile(ConfigArchiveName, 0o444, archive.Bytes()); err != nil {
		return nil, fmt.Errorf("configimage: build: %w", err)
	}
	var out bytes.Buffer
	if _, err := iw.WriteTo(&out); err != nil {
		return nil, fmt.Errorf("configimage: build: %w", err)
	}
	return out.Bytes(), nil
}

// Read checks that r (size bytes) is a config image and returns its
// members in archive order. It refuses another volume label, a missing or
// corrupt config.gz, anything over lim, members that are not directories
// or regular files, paths that are relative, unclean or contain "..", and
// duplicates.
func Read(r io.ReaderAt, size int64, lim Limits) ([]Member, error) {
	lim = lim.withDefaults()
	im, err := isofs.Open(r, size)
	if err != nil {
		return nil, fmt.Errorf("configimage: read: %w", err)
	}
	if im.Label() != VolumeLabel {
		return nil, fmt.Errorf("configimage: read: volume label %q, want %q: %w", im.Label(), VolumeLabel, ErrWrongLabel)
	}
	fi, err := im.Stat(ConfigArchiveName)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("configimage: read: %w", ErrNoConfigArchive)
	}
	if fi.Size() > lim.MaxArchiveSize {
		return nil, fmt.Errorf("configimage: read: %s is %d bytes, limit %d: %w", ConfigArchiveName, fi.Size(), lim.MaxArchiveSize, ErrTooLarge)
	}
	f, err := im.Open(ConfigArchiveName)
	if err != nil {
		return nil, fmt.Errorf("configimage: read: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("configimage: read: %w: %w", ErrCorruptArchive, err)
	}
	// Headers and names cost at most 110+4096+8 bytes a member, and GNU
	// pads the trailer to 512 bytes; anything beyond is not a config image.
	maxStream := lim.MaxTotalSize + int64(lim.MaxMembers+1)*(110+4096+8) + 512
	ar := &archiveReader{r: zr, left: maxStream}
	cr := cpio.NewReader(ar, cpio.Limits{MaxMemberSize: lim.MaxMemberSize, MaxTotalSize: lim.MaxTotalSize, MaxMembers: lim.MaxMembers})
	var members []Member
	for {
		h, err := cr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, cpio.ErrTooLarge) {
			return nil, fmt.Errorf("configimage: read: %w: %w", ErrTooLarge, err)
		}
		if err != nil {
			return nil, fmt.Errorf("configimage: read: %w", err)
		}
		if err := checkPath(h.Name); err != nil {
			return nil, fmt.Errorf("configimage: read: %w", err)
		}
		var data []byte
		if h.Size > 0 {
			data = make([]byte, h.Size)
			if _, err := io.ReadFull(cr, data); err != nil {
				return nil, fmt.Errorf("configimage: read: %w", err)
			}
		}
		members = append(members, Member{Path: h.Name, Mode: h.Mode, Data: data})
	}
	// Read to the end of the gzip stream so its checksum is verified.
	if _, err := io.Copy(io.Discard, ar); err != nil {
		return nil, fmt.Errorf("configimage: read: after the cpio trailer: %w", err)
	}
	if err := checkMembers(members); err != nil {
		return nil, fmt.Errorf("configimage: read: %w", err)
	}
	return members, nil
}

// archiveReader marks errors of the gzip stream as ErrCorruptArchive and
// stops it at left bytes.
type archiveReader struct {
	r    io.Reader
	left int64
}

func (a *archiveReader) Read(p []byte) (int, error) {
	if a.left <= 0 {
		return 0, fmt.Errorf("uncompressed %s larger than the limits allow: %w", ConfigArchiveName, ErrTooLarge)
	}
	if int64(len(p)) > a.left {
		p = p[:a.left]
	}
	n, err := a.r.Read(p)
	a.left -= int64(n)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", ErrCorruptArchive, err)
	}
	return n, err
}

// checkPath accepts an absolute, clean path below "/" without "..".
func checkPath(p string) error {
	bad := func(why string) error { return fmt.Errorf("member %q: %s: %w", p, why, ErrMemberPath) }
	switch {
	case !strings.HasPrefix(p, "/"):
		return bad("not absolute")
	case p == "/":
		return bad("the root itself")
	case strings.IndexByte(p, 0) >= 0:
		return bad("contains NUL")
	case len(p) > 4095:
		return bad("longer than 4095 bytes")
	}
	for _, elem := range strings.Split(p[1:], "/") {
		if elem == ".." {
			return bad(`contains ".."`)
		}
	}
	if path.Clean(p) != p {
		return bad("not clean (want " + path.Clean(p) + ")")
	}
	return nil
}

// checkMembers checks every member and returns all problems joined.
func checkMembers(members []Member) error {
	var errs []error
	kinds := make(map[string]fs.FileMode, len(members))
	for _, m := range members {
		if err := checkPath(m.Path); err != nil {
			errs = append(errs, err)
			continue
		}
		typ := m.Mode &^ (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		switch {
		case typ != 0 && typ != fs.ModeDir:
			errs = append(errs, fmt.Errorf("member %q: mode %v: want a directory or regular file: %w", m.Path, m.Mode, ErrMemberType))
		case typ == fs.ModeDir && len(m.Data) > 0:
			errs = append(errs, fmt.Errorf("member %q: directory with data: %w", m.Path, ErrMemberType))
		}
		if _, dup := kinds[m.Path]; dup {
			errs = append(errs, fmt.Errorf("member %q: %w", m.Path, ErrDuplicateMember))
		}
		kinds[m.Path] = m.Mode
	}
	for _, m := range members {
		if _, ok := kinds[m.Path]; !ok {
			continue // its path was refused above
		}
		for d := path.Dir(m.Path); d != "/"; d = path.Dir(d) {
			if mode, ok := kinds[d]; ok && !mode.IsDir() {
				errs = append(errs, fmt.Errorf("member %q: parent %q is a file member: %w", m.Path, d, ErrMemberPath))
			}
		}
	}
	return errors.Join(errs...)
}

// Extract writes members under root (root + member path), the way the
// host's load-config-iso.sh copies them: missing directories are created
// 0755, directory members then get their mode, files are written to a
// temporary file, fsynced and renamed over the target with the member's
// mode, and onhost.RendezvousEnvPath is written last. Everything is checked first
// (paths, types, clashes with what is already under root), so a bad member
// list writes nothing. Writes go through os.Root: a symlink under root that
// points outside it, or is absolute, is an error rather than followed.
func Extract(members []Member, root string) error {
	if err := checkMembers(members); err != nil {
		return fmt.Errorf("configimage: extract: %w", err)
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("configimage: extract: %w", err)
	}
	defer rt.Close()
	order := extractOrder(members)
	for _, m := range order {
		if err := checkTarget(rt, m); err != nil {
			return fmt.Errorf("configimage: extract: %w", err)
		}
	}
	for _, m := range order {
		rel := m.Path[1:]
		if m.Mode.IsDir() {
			err = mkdirs(rt, rel)
			if err == nil {
				err = rt.Chmod(rel, m.Mode&^fs.ModeDir)
			}
		} else {
			err = writeFile(rt, rel, m)
		}
		if err != nil {
			return fmt.Errorf("configimage: extract %q: %w", m.Path, err)
		}
	}
	return nil
}

// extractOrder is members in their order with onhost.RendezvousEnvPath moved last.
func extractOrder(members []Member) []Member {
	out := make([]Member, 0, len(members))
	var last []Member
	for _, m := range members {
		if m.Path == onhost.RendezvousEnvPath {
			last = append(last, m)
			continue
		}
		out = append(out, m)
	}
	return append(out, last...)
}

// checkTarget refuses a member whose path or a parent of it exists under
// rt with the wrong type.
func checkTarget(rt *os.Root, m Member) error {
	rel := m.Path[1:]
	elems := strings.Split(rel, "/")
	for i := 1; i < len(elems); i++ {
		d := strings.Join(elems[:i], "/")
		fi, err := rt.Stat(d)
		if errors.Is(err, fs.ErrNotExist) {
			break // this and what is below it will be created
		}
		if err != nil {
			return fmt.Errorf("member %q: %w", m.Path, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("member %q: %q exists and is not a directory: %w", m.Path, "/"+d, ErrMemberType)
		}
	}
	fi, err := rt.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("member %q: %w", m.Path, err)
	case m.Mode.IsDir() && !fi.IsDir(), !m.Mode.IsDir() && fi.IsDir():
		return fmt.Errorf("member %q: exists as %v: %w", m.Path, fi.Mode().Type(), ErrMemberType)
	}
	return nil
}

// mkdirs creates the missing directories of rel, each 0755 whatever the
// umask.
func mkdirs(rt *os.Root, rel string) error {
	elems := strings.Split(rel, "/")
	for i := range elems {
		d := strings.Join(elems[:i+1], "/")
		err := rt.Mkdir(d, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			err = rt.Chmod(d, 0o755)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeFile replaces rel atomically: temporary file, fsync, rename, fsync
// of the directory.
func writeFile(rt *os.Root, rel string, m Member) (err error) {
	dir := path.Dir(rel)
	if dir != "." {
		if err := mkdirs(rt, dir); err != nil {
			return err
		}
	}
	var f *os.File
	var tmp string
	base := path.Base(rel)
	base = base[:min(len(base), 200)] // the temporary name stays under NAME_MAX
	for range 10 {
		tmp = path.Join(dir, fmt.Sprintf(".%s.%016x.tmp", base, rand.Uint64()))
		f, err = rt.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			rt.Remove(tmp)
		}
	}()
	if _, err = f.Write(m.Data); err != nil {
		return err
	}
	if err = f.Chmod(m.Mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = rt.Rename(tmp, rel); err != nil {
		return err
	}
	d, err := rt.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
