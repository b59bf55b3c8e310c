package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/sandbox/loopback"
	"github.com/nodezero/nodezero/wire"
)

// A sandbox's directory is used once: a second run in it is refused, or
// resumes the same install at the same addresses (--resume), or wipes it
// first (--fresh). DIR/sandbox.json keeps what a resumed run needs.

// StateFile is the name of the file in DIR that keeps a run's addresses.
const StateFile = "sandbox.json"

// State is DIR/sandbox.json: what a run needs to be resumed where it was.
type State struct {
	// Prefix is the run's /24 of loopback; the hosts stand on it.
	Prefix  string `json:"prefix"`
	Masters int    `json:"masters"`
	Workers int    `json:"workers"`
	APITLS  bool   `json:"api_tls,omitempty"`
	// DNS, Registry and NTP are the responders' ip:port.
	DNS      string `json:"dns"`
	Registry string `json:"registry"`
	NTP      string `json:"ntp"`
	// Disks is the directory of the hosts' disk files, on a tmpfs when
	// DisksTmpfs.
	Disks      string `json:"disks"`
	DisksTmpfs bool   `json:"disks_tmpfs,omitempty"`
	// ClusterID and Status are the cluster's as last seen.
	ClusterID string             `json:"cluster_id,omitempty"`
	Status    wire.ClusterStatus `json:"status,omitempty"`
}

// registryDir keeps the registry's CA, certificate and key, so a resumed
// run serves the certificate the hosts' trust bundle names.
func registryDir(dir string) string { return filepath.Join(dir, "registry") }

func readState(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", filepath.Join(dir, StateFile), err)
	}
	return &st, nil
}

func writeState(dir string, st *State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, StateFile), append(b, '\n'), 0o644)
}

func writeKeyPair(dir string, p loopback.KeyPair) error {
	d := registryDir(dir)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	for name, b := range map[string][]byte{"ca.crt": p.CA, "tls.crt": p.Cert, "tls.key": p.Key} {
		if err := os.WriteFile(filepath.Join(d, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func readKeyPair(dir string) (loopback.KeyPair, error) {
	var p loopback.KeyPair
	var err error
	d := registryDir(dir)
	for name, dst := range map[string]*[]byte{"ca.crt": &p.CA, "tls.crt": &p.Cert, "tls.key": &p.Key} {
		if *dst, err = os.ReadFile(filepath.Join(d, name)); err != nil {
			return p, fmt.Errorf("sandbox: the registry's certificate: %w", err)
		}
	}
	return p, nil
}

// ErrUsedDir is returned (wrapped) for a --dir that holds an earlier
// sandbox, given neither --resume nor --fresh.
var ErrUsedDir = errors.New("the directory holds an earlier sandbox")

// usedDir describes what an earlier run left in dir: "" when dir holds no
// sandbox (missing or empty), else a phrase for the refusal. notSandbox is
// set for a non-empty directory that holds no sandbox.
func usedDir(dir string) (what string, notSandbox bool, err error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(ents) == 0) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	st, serr := readState(dir)
	sum, _ := readSummary(dir)
	switch {
	case sum != nil && sum.Status == wire.ClusterStatusInstalled:
		return fmt.Sprintf("cluster %s installed", sum.ClusterID), false, nil
	case st != nil && st.ClusterID != "":
		return fmt.Sprintf("cluster %s, last seen %s", st.ClusterID, st.Status), false, nil
	case serr == nil || sum != nil || exists(filepath.Join(dir, "hosts")):
		return "an install that never registered a cluster", false, nil
	}
	return "", true, nil
}

// readSummary reads DIR/summary.json, nil when there is none.
func readSummary(dir string) (*Summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// wipe removes what an earlier sandbox left in dir (its disks on a tmpfs
// too), keeping dir itself.
func wipe(dir string) error {
	if st, err := readState(dir); err == nil && st.DisksTmpfs && isSandboxShm(st.Disks) {
		if err := os.RemoveAll(st.Disks); err != nil {
			return err
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// lockDir takes DIR/sandbox.lock for the run: two sandboxes in one
// directory would share hosts' roots and disks. The lock goes with the
// process.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, "sandbox.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: another sandbox runs in %s (%v)", dir, err)
	}
	return func() { f.Close() }, nil
}

// locked reports whether a running sandbox holds dir's lock.
func locked(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "sandbox.lock"))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
