package main

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/configimage"
)

// File modes (issue #8, security): the files ABI puts on a host have ABI's
// modes, a file holding a secret (secrets_test.go) is its owner's alone,
// and nothing is writable by others.

// abiModes are the modes openshift-install's agent Ignition gives the
// files it puts on a host (pkg/asset/agent/image/ignition.go, and
// bootstrap.AddStorageFiles: 0600 for its data/agent/files tree), which a
// config image carries over; the store is ours. A required entry must
// match a file of every host root checked.
var abiModes = []struct {
	glob     string
	mode     fs.FileMode
	required bool
}{
	// The agent and user tokens: 0600, as newer installers write it (the
	// full ISO's Ignition still says 0644).
	{"/etc/assisted/rendezvous-host.env", 0o600, true},
	{"/etc/assisted/manifests/*", 0o600, true},
	{"/etc/assisted/extra-manifests/*", 0o644, false},
	{"/etc/assisted/hostconfig/*/*", 0o644, false},
	{"/etc/assisted/hostnames/*", 0o600, false},
	{"/etc/assisted/network/*/*", 0o600, false},
	{"/usr/local/share/assisted-service/assisted-service.env", 0o600, true},
	{"/usr/local/share/start-cluster/start-cluster.env", 0o600, true},
	{"/opt/agent/tls/*", 0o600, true},
	{"/root/.docker/config.json", 0o600, true},
	{"/etc/NetworkManager/conf.d/clientid.conf", 0o600, true},
	{"/etc/systemd/system.conf.d/10-default-env.conf", 0o600, false},
	{"/etc/chrony.conf", 0o644, false},
	// NetworkManager refuses a keyfile group or others can read.
	{"/etc/NetworkManager/system-connections/*", 0o600, false},
	// The store holds the pull secret and the cluster's credentials.
	{dataDirPath + "/nodezero.db*", 0o600, false},
}

// checkHostModes walks a host root: the files of abiModes have ABI's mode,
// a file holding a secret or a private key is its owner's alone, and
// nothing is writable by others.
func checkHostModes(t *testing.T, root string, secrets []secret) {
	t.Helper()
	checkModes(t, root, secrets, true)
}

// checkModes walks root as checkHostModes does, with abiModes only when
// host is set. skip names root-relative directories not to walk.
func checkModes(t *testing.T, root string, secrets []secret, host bool, skip ...string) {
	t.Helper()
	matched := make([]int, len(abiModes))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := "/" + strings.TrimPrefix(filepath.ToSlash(strings.TrimPrefix(p, root)), "/")
		if d.IsDir() && slices.Contains(skip, rel) {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		perm := fi.Mode().Perm()
		if fi.Mode()&fs.ModeSymlink == 0 && perm&0o002 != 0 {
			t.Errorf("%s: mode %v: writable by others", rel, fi.Mode())
		}
		if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			t.Errorf("%s: mode %v: setuid or setgid", rel, fi.Mode())
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		for i, m := range abiModes {
			if ok, _ := path.Match(m.glob, rel); ok && host {
				matched[i]++
				if perm != m.mode {
					t.Errorf("%s: mode %04o, want %04o (as ABI writes it)", rel, perm, m.mode)
				}
			}
		}
		if fi.Size() > 64<<20 {
			return nil // disk images and payloads hold no secret
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found := findSecrets(b, secrets)
		if privateKeyPEM(b) {
			found = append(found, "a PEM private key")
		}
		if len(found) > 0 && perm&0o077 != 0 {
			t.Errorf("%s: mode %04o, but it holds %s: want 0600", rel, perm, strings.Join(found, ", "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range abiModes {
		if host && m.required && matched[i] == 0 {
			t.Errorf("%s: no file matches %s", root, m.glob)
		}
	}
}

// TestConfigImageSecretModes: a config image made from an input set with a
// proxy and a BMC that carry passwords, loaded into a host root, gives
// ABI's modes and keeps every secret in 0600 files; neither command prints
// one.
func TestConfigImageSecretModes(t *testing.T) {
	for _, set := range []string{"static"} {
		t.Run(set, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "install")
			copyDir(t, filepath.Join("..", "..", "configimage", "inputs", "testdata", set), dir)
			// Secrets of the inputs beyond the pull secret: a proxy's
			// password and a host's BMC password.
			const proxyPass, bmcPass = "pr0xy-Pa55-planted-by-the-test", "bmc-Pa55-planted-by-the-test"
			edit(t, filepath.Join(dir, "install-config.yaml"), func(b []byte) []byte {
				return append(bytes.TrimRight(b, "\n"), []byte("\nproxy:\n  httpProxy: http://squid:"+proxyPass+"@proxy.example.com:3128\n  noProxy: .example.com\n")...)
			})
			edit(t, filepath.Join(dir, "agent-config.yaml"), func(b []byte) []byte {
				const host = "- hostname: master-0\n  role: master\n"
				if !bytes.Contains(b, []byte(host)) {
					t.Fatalf("agent-config.yaml of %s has no %q to add a BMC to", set, host)
				}
				return bytes.Replace(b, []byte(host), []byte(host+"  bmc:\n    address: redfish-virtualmedia://192.168.111.1:8000/redfish/v1/Systems/1\n    username: admin\n    password: "+bmcPass+"\n"), 1)
			})
			created := runBinary(t, "create", "config-image", "--dir", dir)
			iso := filepath.Join(dir, "agentconfig.noarch.iso")
			root := filepath.Join(t.TempDir(), "host")
			loaded := runBinary(t, "load-config-image", "--root", root, "--file", iso)

			secrets := append(installSecrets(t, dir), secret{"proxy password", proxyPass}, secret{"BMC password", bmcPass})
			checkOutputs(t, []output{{"create config-image", []byte(created)}, {"load-config-image", []byte(loaded)}}, secrets)
			checkHostModes(t, root, secrets)
			if _, err := os.Stat(filepath.Join(root, "/etc/systemd/system.conf.d/10-default-env.conf")); err != nil {
				t.Errorf("the proxy's environment file: %v", err)
			}
			for f, want := range map[string]fs.FileMode{
				stateFile: 0o600, "auth/kubeconfig": 0o600, "auth/kubeadmin-password": 0o600, "agentconfig.noarch.iso": 0o600,
			} {
				if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != want {
					t.Errorf("%s: %v %v, want mode %04o", f, fi, err, want)
				}
			}
			// The image itself holds the secrets: the matcher must see
			// them through the ISO and the gzip-compressed cpio.
			img, err := os.ReadFile(iso)
			if err != nil {
				t.Fatal(err)
			}
			found := findSecrets(img, secrets)
			for _, want := range []string{"proxy password", "BMC password", configimage.TokenUser + " token signature"} {
				if !slices.Contains(found, want) {
					t.Errorf("secrets found in the config image: %q; want %s among them", found, want)
				}
			}
		})
	}
}

// edit rewrites the file at p with fn.
func edit(t *testing.T, p string, fn func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, fn(b), 0o600); err != nil {
		t.Fatal(err)
	}
}
