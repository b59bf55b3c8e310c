package factoryimage

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
)

// Options say what Build makes and from what.
type Options struct {
	// Dir receives factory.raw and factory.qcow2 (required).
	Dir string
	// Cache keeps the layers between builds: DefaultCacheDir when empty.
	Cache string
	// Binary is the static nodezero binary both images carry
	// (os.Executable() when empty).
	Binary string
	// Ignition is the ignition binary tools/ignition/build.sh builds
	// (FindIgnition when empty).
	Ignition string
	// Payload is what payload.json says besides the OS image: the release
	// image, its version and its images. Build fills in OS.
	Payload diskwrite.Payload
	// Mirror and SecurityMirror are the Debian archives the rootfs comes
	// from (DefaultMirror, DefaultSecurityMirror when empty): the only
	// network a build uses, and only when the rootfs is not cached.
	Mirror, SecurityMirror string
	// Base is a production base disk image (RHCOS or FCOS). Build checks
	// it and refuses it (CheckBase): only the Debian base is built yet.
	Base string
	// ServiceEnv is added to nodezero.service's environment, KEY=VALUE
	// each (serviceEnvFile): what node zero's service is told on every host
	// of this image, e.g. HW_VALIDATOR_REQUIREMENTS or DISABLED_STEPS.
	ServiceEnv []string
	// SourceDateEpoch is every timestamp in the images (DefaultEpoch when 0).
	SourceDateEpoch int64
	// Log receives the progress lines and the tools' output (io.Discard
	// when nil).
	Log io.Writer
}

// Defaults.
const (
	DefaultMirror         = "http://deb.debian.org/debian"
	DefaultSecurityMirror = "http://deb.debian.org/debian-security"
	// DefaultEpoch is 2024-01-01T00:00:00Z.
	DefaultEpoch = 1704067200
	// Suite is the Debian release both images are built from.
	Suite = "bookworm"
)

// Environment variables: the cache's folder, and the ignition binary (ahead
// of the tools cache).
const (
	EnvCache      = "NODEZERO_IMAGE_CACHE"
	EnvIgnition   = "NODEZERO_IGNITION"
	EnvToolsCache = "NODEZERO_TOOLS_CACHE"
)

// The ignition the installed OS runs: the github.com/coreos/ignition/v2
// version pinned in tools/ignition/go.mod (and in the main module's go.mod)
// and the first 12 hex digits of the SHA-256 of tools/ignition/go.sum,
// which with the flavour name its folder in the tools cache (a test holds
// them to those files).
const (
	IgnitionVersion = "v2.24.0"
	IgnitionSum     = "41a75a9ad82f"
	ignitionFlavour = "debian"
)

// ErrMissingTool: a program the build runs is not installed.
var ErrMissingTool = errors.New("factory image: tools missing")

// DefaultCacheDir is $NODEZERO_IMAGE_CACHE, else nodezero-images in the
// user's cache folder (${XDG_CACHE_HOME:-~/.cache}).
func DefaultCacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("factory image: no cache folder (%v); set %s or pass a cache", err, EnvCache)
	}
	return filepath.Join(d, "nodezero-images"), nil
}

// FindIgnition is $NODEZERO_IGNITION, else the binary tools/ignition/build.sh
// put into the tools cache ($NODEZERO_TOOLS_CACHE, else nodezero-tools in
// the user's cache folder, as kube/localapi finds kube-apiserver).
func FindIgnition() (string, error) {
	if p := os.Getenv(EnvIgnition); p != "" {
		if !executable(p) {
			return "", fmt.Errorf("%w: %s=%s is not an executable file", ErrMissingTool, EnvIgnition, p)
		}
		return p, nil
	}
	cache := os.Getenv(EnvToolsCache)
	if cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("%w: ignition: no cache folder (%v); set %s", ErrMissingTool, err, EnvIgnition)
		}
		cache = filepath.Join(d, "nodezero-tools")
	}
	p := filepath.Join(cache, "ignition-"+IgnitionVersion+"-"+IgnitionSum+"-"+ignitionFlavour, "ignition")
	if !executable(p) {
		return "", fmt.Errorf("%w: ignition (%s, or set %s): tools/ignition/build.sh (make deps) builds it", ErrMissingTool, p, EnvIgnition)
	}
	return p, nil
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// tools are the programs a build runs, each with the Debian package that
// has it. mmdebstrap is needed only when the rootfs is not cached, but a
// machine that lacks it cannot rebuild a layer, so it is asked for always.
var tools = []struct{ name, pkg string }{
	{"mmdebstrap", "mmdebstrap"},
	{"mkfs.ext4", "e2fsprogs"},
	{"debugfs", "e2fsprogs"},
	{"mkfs.vfat", "dosfstools"},
	{"mcopy", "mtools"},
	{"mmd", "mtools"},
	{"sgdisk", "gdisk"},
	{"qemu-img", "qemu-utils"},
	{"zstd", "zstd"},
	{"dumpe2fs", "e2fsprogs"},
	{"cp", "coreutils"},
	{"chroot", "coreutils"},
}

// checkTools says every missing program and its package at once.
func checkTools() error {
	var missing, pkgs []string
	seen := map[string]bool{}
	for _, t := range tools {
		if _, err := exec.LookPath(t.name); err != nil {
			missing = append(missing, t.name)
			if !seen[t.pkg] {
				seen[t.pkg] = true
				pkgs = append(pkgs, t.pkg)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s (apt-get install %s)", ErrMissingTool, strings.Join(missing, ", "), strings.Join(pkgs, " "))
	}
	return nil
}

// checkStatic refuses a dynamically linked nodezero: the images carry the
// CGO_ENABLED=0 build (docs/architecture.md), which runs on any root.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("nodezero binary %s: %w (want the static linux/amd64 nodezero executable)", path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("nodezero binary %s is for %s, want x86-64", path, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("nodezero binary %s is dynamically linked; build it with CGO_ENABLED=0", path)
		}
	}
	return nil
}

// resolved are Options with every default filled in.
type resolved struct {
	Options
	epoch time.Time
}

func (o Options) resolve() (*resolved, error) {
	if o.Dir == "" {
		return nil, errors.New("factory image: no output directory")
	}
	var err error
	if o.Cache == "" {
		if o.Cache, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	if o.Cache, err = filepath.Abs(o.Cache); err != nil {
		return nil, fmt.Errorf("factory image: cache: %w", err)
	}
	if o.Binary == "" {
		if o.Binary, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("factory image: find this executable: %w", err)
		}
	}
	if err := checkStatic(o.Binary); err != nil {
		return nil, fmt.Errorf("factory image: %w", err)
	}
	if o.Ignition == "" {
		if o.Ignition, err = FindIgnition(); err != nil {
			return nil, err
		}
	} else if !executable(o.Ignition) {
		return nil, fmt.Errorf("factory image: ignition %s is not an executable file", o.Ignition)
	}
	if o.Mirror == "" {
		o.Mirror = DefaultMirror
	}
	if o.SecurityMirror == "" {
		o.SecurityMirror = DefaultSecurityMirror
	}
	if o.SourceDateEpoch == 0 {
		o.SourceDateEpoch = DefaultEpoch
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return &resolved{Options: o, epoch: time.Unix(o.SourceDateEpoch, 0).UTC()}, nil
}
