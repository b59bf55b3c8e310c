package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/kube/localapi"
	"github.com/nodezero/nodezero/sim"
)

// TestPrepareKube: the sandbox points auth/kubeconfig at the API
// VIP whatever the mode, and without the tools says in one line that the
// kube API step is skipped ("auto") or fails ("yes").
func TestPrepareKube(t *testing.T) {
	st, err := credentials.New(nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	vip := netip.MustParseAddr("127.9.8.3")
	for _, tc := range []struct {
		mode, wantSaid, wantErr string
	}{
		{"no", "", ""},
		{"auto", "kube API step skipped: kube api tools missing: kube-apiserver (", ""},
		{"yes", "", "sandbox: --kube-api yes: kube api tools missing: kube-apiserver ("},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv(localapi.EnvToolsCache, t.TempDir()) // an empty cache
			for _, e := range []string{localapi.EnvAPIServer, localapi.EnvEtcd, localapi.EnvKubectl} {
				t.Setenv(e, "")
			}
			dir := t.TempDir()
			installDir := filepath.Join(dir, "install")
			kc := filepath.Join(installDir, "auth", "kubeconfig")
			if err := os.MkdirAll(filepath.Dir(kc), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(kc, st.Kubeconfig(ClusterName, BaseDomain), 0o600); err != nil {
				t.Fatal(err)
			}
			zero := &Host{root: filepath.Join(dir, "root")}
			var said []string
			o := Options{KubeAPI: tc.mode, Dir: dir, ConfigImage: ConfigImage{
				State: func(string) (*credentials.State, error) { return st, nil }, StateFile: ".nodezero_state.json"}}
			k, err := prepareKube(o, installDir, vip, zero, func(f string, a ...any) {
				said = append(said, fmt.Sprintf(f, a...))
			})
			if k != nil {
				t.Errorf("prepareKube returned an API to start without the tools")
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || !errors.Is(err, localapi.ErrNoTools)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			skipped := 0
			for _, l := range said {
				if strings.Contains(l, "kube API step skipped") {
					skipped++
					if !strings.HasPrefix(l, tc.wantSaid) || tc.wantSaid == "" {
						t.Errorf("said %q, want %q", l, tc.wantSaid)
					}
				}
			}
			if want := btoi(tc.wantSaid != ""); skipped != want {
				t.Errorf("said %q: %d lines of the skipped step, want %d", said, skipped, want)
			}
			got, err := kube.LoadKubeconfig(kc)
			if err != nil {
				t.Fatal(err)
			}
			if got.Server != "https://127.9.8.3:6443" || got.TLSServerName != "api.sandbox.nodezero.test" {
				t.Errorf("auth/kubeconfig: server %s for %s, want https://127.9.8.3:6443 for api.sandbox.nodezero.test", got.Server, got.TLSServerName)
			}
			if _, err := os.Stat(filepath.Join(zero.root, sim.KubeconfigPath)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("node zero got a kubeconfig for its controller (%v), with no API to write to", err)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
