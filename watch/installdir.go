package watch

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/nodezero/nodezero/configimage"
)

// Files of an install directory that `nodezero create config-image --dir D`
// writes for wait-for, as openshift-install's agent assets are found in
// theirs (docs/reference/abi-on-host.md §1.1b, §11).
const (
	RendezvousIPFile = "rendezvousIP"                 // node zero's address, as openshift-install writes it
	WatcherTokenFile = "auth/watcher.token"           // the Watcher-Authorization token
	KubeconfigFile   = "auth/kubeconfig"              // the admin kubeconfig of the installed cluster
	KubeadminFile    = "auth/kubeadmin-password"      // the console's kubeadmin password
	installDirHint   = "nodezero create config-image" // what writes them
)

// InstallDir is what wait-for reads from an install directory: paths of
// the files found, "" for those it has none of.
type InstallDir struct {
	Dir          string
	RendezvousIP string
	TokenFile    string
	CACert       string // node zero's HTTPS CA; "" when it serves HTTP
	Kubeconfig   string
	PasswordFile string
}

// ReadInstallDir reads dir's rendezvous IP and finds its token, CA,
// kubeconfig and password files. The first two must exist; every problem
// names the file and what writes it.
func ReadInstallDir(dir string) (InstallDir, error) {
	d := InstallDir{Dir: dir}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return d, fmt.Errorf("wait-for --dir %s: not a directory (the install directory of '%s --dir')", dir, installDirHint)
	}
	var errs []error
	missing := func(name string) error {
		return fmt.Errorf("%s: missing; '%s --dir %s' writes it", filepath.Join(dir, name), installDirHint, dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, RendezvousIPFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		errs = append(errs, missing(RendezvousIPFile))
	case err != nil:
		errs = append(errs, err)
	default:
		ip := strings.TrimSpace(string(b))
		if _, perr := netip.ParseAddr(ip); perr != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not an IP address", filepath.Join(dir, RendezvousIPFile), ip))
		}
		d.RendezvousIP = ip
	}
	d.TokenFile = filepath.Join(dir, WatcherTokenFile)
	if _, err := os.Stat(d.TokenFile); err != nil {
		errs = append(errs, missing(WatcherTokenFile))
	}
	if len(errs) > 0 {
		return d, fmt.Errorf("wait-for: %w", errors.Join(errs...))
	}
	// Node zero serves HTTPS when the directory holds its certificate;
	// the clients then trust tls/ca.crt, else the certificate itself.
	cert := filepath.Join(dir, configimage.APITLSDir, configimage.APICertFile)
	if _, err := os.Stat(cert); err == nil {
		d.CACert = cert
		if ca := filepath.Join(dir, configimage.APITLSDir, configimage.APICAFile); exists(ca) {
			d.CACert = ca
		}
	}
	if p := filepath.Join(dir, KubeconfigFile); exists(p) {
		d.Kubeconfig = p
	}
	if p := filepath.Join(dir, KubeadminFile); exists(p) {
		d.PasswordFile = p
	}
	return d, nil
}

// exists reports whether path names a file or directory.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
