package main

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
// theirs (reference/abi-on-host.md §1.1b, §11).
const (
	rendezvousIPFile = "rendezvousIP"                 // node zero's address, as openshift-install writes it
	watcherTokenFile = "auth/watcher.token"           // the Watcher-Authorization token
	kubeconfigFile   = "auth/kubeconfig"              // the admin kubeconfig of the installed cluster
	kubeadminFile    = "auth/kubeadmin-password"      // the console's kubeadmin password
	installDirHint   = "nodezero create config-image" // what writes them
)

// installDir is what wait-for reads from an install directory.
type installDir struct {
	dir          string
	rendezvousIP string
	tokenFile    string
	cacert       string // node zero's HTTPS CA; "" when it serves HTTP
	kubeconfig   string // "" when the directory has none
	passwordFile string // "" when the directory has none
}

// readInstallDir reads dir's rendezvous IP and finds its token, CA,
// kubeconfig and password files. The first two must exist; every problem
// names the file and what writes it.
func readInstallDir(dir string) (installDir, error) {
	d := installDir{dir: dir}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return d, fmt.Errorf("wait-for --dir %s: not a directory (the install directory of '%s --dir')", dir, installDirHint)
	}
	var errs []error
	missing := func(name string) error {
		return fmt.Errorf("%s: missing; '%s --dir %s' writes it", filepath.Join(dir, name), installDirHint, dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, rendezvousIPFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		errs = append(errs, missing(rendezvousIPFile))
	case err != nil:
		errs = append(errs, err)
	default:
		ip := strings.TrimSpace(string(b))
		if _, perr := netip.ParseAddr(ip); perr != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not an IP address", filepath.Join(dir, rendezvousIPFile), ip))
		}
		d.rendezvousIP = ip
	}
	d.tokenFile = filepath.Join(dir, watcherTokenFile)
	if _, err := os.Stat(d.tokenFile); err != nil {
		errs = append(errs, missing(watcherTokenFile))
	}
	if len(errs) > 0 {
		return d, fmt.Errorf("wait-for: %w", errors.Join(errs...))
	}
	// Node zero serves HTTPS when the directory holds its certificate;
	// the clients then trust tls/ca.crt, else the certificate itself.
	cert := filepath.Join(dir, configimage.APITLSDir, configimage.APICertFile)
	if _, err := os.Stat(cert); err == nil {
		d.cacert = cert
		if _, err := os.Stat(apiCAFile(dir)); err == nil {
			d.cacert = apiCAFile(dir)
		}
	}
	if p := filepath.Join(dir, kubeconfigFile); exists(p) {
		d.kubeconfig = p
	}
	if p := filepath.Join(dir, kubeadminFile); exists(p) {
		d.passwordFile = p
	}
	return d, nil
}
