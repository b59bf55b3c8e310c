package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/configimage/nmstate"
	"github.com/nodezero/nodezero/daemon/register"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/watch"
	"github.com/nodezero/nodezero/wire"
)

// TestConfigImageToRegisteredCluster: for each input set, create the
// config image (twice: same bytes), load it into a host root with the
// command, start node zero's service with the image's public key, and
// register the cluster and infra-env from the manifests the host now has,
// as node zero does: the registered cluster says what the inputs say.
func TestConfigImageToRegisteredCluster(t *testing.T) {
	// Built before any subtest's minute starts: on a cold build cache the
	// build alone can take most of it.
	nodezeroBinary(t)
	for _, set := range []string{"compact", "static", "sno", "ipv6", "dualstack"} {
		t.Run(set, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			dir := filepath.Join(t.TempDir(), "install")
			copyDir(t, filepath.Join("..", "..", "configimage", "inputs", "testdata", set), dir)
			runBinary(t, "create", "config-image", "--dir", dir)
			iso := filepath.Join(dir, "agentconfig.noarch.iso")
			first, err := os.ReadFile(iso)
			if err != nil {
				t.Fatal(err)
			}
			runBinary(t, "create", "config-image", "--dir", dir)
			if again, _ := os.ReadFile(iso); !bytes.Equal(first, again) {
				t.Error("a second create gave different bytes")
			}
			members, err := configimage.Read(bytes.NewReader(first), int64(len(first)), configimage.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if last := members[len(members)-1].Path; last != onhost.RendezvousEnvPath {
				t.Errorf("last member %s, want %s", last, onhost.RendezvousEnvPath)
			}
			for _, f := range []string{"auth/kubeconfig", "auth/kubeadmin-password"} {
				if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: %v %v", f, fi, err)
				}
			}

			root := filepath.Join(t.TempDir(), "host")
			runBinary(t, "load-config-image", "--root", root, "--file", iso)
			env := readEnv(t, filepath.Join(root, onhost.AssistedServiceEnvPath))
			rv := readEnv(t, filepath.Join(root, onhost.RendezvousEnvPath))

			svcDir := t.TempDir()
			p := start(t, filepath.Join(svcDir, "service.log"), []string{"EC_PUBLIC_KEY_PEM=" + env["EC_PUBLIC_KEY_PEM"]},
				"service", "--dir", svcDir, "--listen", "127.0.0.1:0")
			waitFor(t, "the service", 20*time.Second, func() (bool, string) { return listeningRE.MatchString(p.output()), p.output() })
			addr := listeningRE.FindStringSubmatch(p.output())[1]
			c, err := wire.NewClient("http://"+addr, wire.WithUserToken(rv["USER_AUTH_TOKEN"]))
			if err != nil {
				t.Fatal(err)
			}
			ms, err := manifests.LoadFrom(filepath.Join(root, configimage.ManifestsDir), filepath.Join(root, configimage.ExtraManifestsDir))
			if err != nil {
				t.Fatal(err)
			}
			hostFiles := []string{configimage.ClientIDConfPath}
			if len(ms.InfraEnv.Spec.AdditionalNTPSources) > 0 {
				hostFiles = append(hostFiles, configimage.ChronyConfPath)
			}
			for _, f := range hostFiles {
				if _, err := os.Stat(filepath.Join(root, f)); err != nil {
					t.Errorf("host file: %v", err)
				}
			}
			checkNetworkDirs(t, root, ms)
			cl, err := register.RegisterCluster(ctx, c, ms)
			if err != nil {
				t.Fatalf("register cluster with the image's user token: %v", err)
			}
			if _, err := register.RegisterInfraEnv(ctx, c, ms, cl.ID); err != nil {
				t.Fatalf("register infra-env: %v", err)
			}
			ic, ac, rep := configimage.LoadInputs(dir)
			if rep.HasErrors() {
				t.Fatal(rep.String())
			}
			masters, _, _ := ic.ReplicaCounts()
			if cl.Name != ic.Metadata.Name || cl.BaseDNSDomain != ic.BaseDomain || cl.ControlPlaneCount != masters {
				t.Errorf("cluster %s.%s cp=%d, want %s.%s cp=%d", cl.Name, cl.BaseDNSDomain, cl.ControlPlaneCount, ic.Metadata.Name, ic.BaseDomain, masters)
			}
			api, _ := ic.Platform.VIPs()
			if len(cl.APIVIPs) != len(api) || (len(api) > 0 && string(cl.APIVIPs[0].IP) != api[0]) {
				t.Errorf("api vips %v, want %v", cl.APIVIPs, api)
			}
			if cl.OCPReleaseImage != defaultRelease {
				t.Errorf("release image %q", cl.OCPReleaseImage)
			}
			if ac != nil && rv["NODE_ZERO_IP"] != ac.RendezvousIP {
				t.Errorf("NODE_ZERO_IP = %q, want %q", rv["NODE_ZERO_IP"], ac.RendezvousIP)
			}
			// wait-for --dir finds node zero and the watcher token the hosts have.
			d, err := watch.ReadInstallDir(dir)
			if err != nil {
				t.Fatalf("readInstallDir: %v", err)
			}
			if ac != nil && d.RendezvousIP != ac.RendezvousIP {
				t.Errorf("%s = %q, want %q", rendezvousIPFile, d.RendezvousIP, ac.RendezvousIP)
			}
			if tok, _ := os.ReadFile(d.TokenFile); strings.TrimSpace(string(tok)) != env["WATCHER_AUTH_TOKEN"] || len(tok) < 20 {
				t.Errorf("%s = %q, want assisted-service.env's WATCHER_AUTH_TOKEN %q", watcherTokenFile, tok, env["WATCHER_AUTH_TOKEN"])
			}
			if d.Kubeconfig == "" || d.PasswordFile == "" {
				t.Errorf("readInstallDir found kubeconfig %q, password %q", d.Kubeconfig, d.PasswordFile)
			}
			// A second registration, as after a restart, finds the same cluster.
			again, err := register.RegisterCluster(ctx, c, ms)
			if err != nil || again.ID != cl.ID {
				t.Errorf("second registration: %v, id %v", err, again)
			}
		})
	}
}

func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := onhost.ParseEnv(path, b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkNetworkDirs: every host with a networkConfig has a host<N> directory
// of keyfiles (0600) and mac_interface.ini, and each directory is the one
// the on-host matching picks for that host's MACs, renamed to the real NIC
// names the test makes up.
func checkNetworkDirs(t *testing.T, root string, ms *manifests.Set) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, configimage.NetworkDir, "host*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != len(ms.NMStateConfigs) {
		t.Fatalf("%d network host dirs, want one per NMStateConfig (%d)", len(dirs), len(ms.NMStateConfigs))
	}
	for _, nc := range ms.NMStateConfigs {
		local := map[string]string{}
		for i, itf := range nc.Spec.Interfaces {
			local[strings.ToUpper(itf.MACAddress)] = fmt.Sprintf("ens%d", 3+i)
		}
		matched := 0
		for _, d := range dirs {
			entries, err := os.ReadDir(d)
			if err != nil {
				t.Fatal(err)
			}
			var files []nmstate.Keyfile
			for _, e := range entries {
				fi, _ := e.Info()
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("%s/%s mode %v, want 0600", d, e.Name(), fi.Mode().Perm())
				}
				b, err := os.ReadFile(filepath.Join(d, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, nmstate.Keyfile{Name: e.Name(), Data: b})
			}
			ok, out, err := nmstate.MatchHost(files, local)
			if err != nil {
				t.Fatalf("%s: %v", d, err)
			}
			if !ok {
				continue
			}
			matched++
			for _, f := range out {
				if strings.HasSuffix(f.Name, ".nmconnection") && !strings.HasPrefix(f.Name, "ens") && !strings.Contains(string(f.Data), "type=bond") && !strings.Contains(string(f.Data), "type=bridge") {
					t.Errorf("%s: keyfile %s not renamed to a real NIC name", d, f.Name)
				}
			}
		}
		if matched != 1 {
			t.Errorf("host with NICs %v matched %d network dirs, want 1", nc.Spec.Interfaces, matched)
		}
	}
}
