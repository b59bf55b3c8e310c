package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/internal/atomicfile"
)

// stateFile keeps an install directory's generated secrets, like
// openshift-install's .openshift_install_state.json: a second run gives
// the same config image.
const stateFile = ".nodezero_state.json"

// runCreateConfigImage is `nodezero create config-image --dir D`.
func runCreateConfigImage(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "create config-image", "the config image (agentconfig.noarch.iso, label agent_configimage) and auth/ from install-config.yaml and agent-config.yaml", "[--dir DIR] [flags]",
		"nodezero create config-image --dir ./mycluster",
		"nodezero create config-image --dir ./mycluster --release-image quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64")
	dir := fs.String("dir", ".", "install directory holding install-config.yaml and agent-config.yaml")
	release := releaseFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	rel := release()
	if _, err := os.Stat(filepath.Join(*dir, configimage.AgentConfigFile)); errors.Is(err, os.ErrNotExist) {
		// Optional for the manifests, not for an image: read as a field
		// error ("rendezvousIP: required") it sent people looking in a
		// file that is not there.
		return fmt.Errorf("create config-image: %s not found: a config image needs it, for its rendezvousIP (the address of the host that becomes node zero); its hosts and networks are optional (create cluster-manifests can do without it)", filepath.Join(*dir, configimage.AgentConfigFile))
	}
	set, ac, err := loadInstall(*dir, rel, stderr)
	if err != nil {
		return err
	}
	var rendezvousIP string
	if ac != nil {
		rendezvousIP = ac.RendezvousIP
	}
	apiTLS, err := configimage.LoadAPITLS(*dir, rendezvousIP, time.Now())
	if err != nil {
		return err
	}
	st, err := loadOrCreateState(*dir)
	if err != nil {
		return err
	}
	acRaw, _ := os.ReadFile(filepath.Join(*dir, configimage.AgentConfigFile))
	a := &configimage.Assembly{Manifests: set, AgentConfig: ac, AgentConfigRaw: acRaw, State: st, ReleaseImage: rel.Image, APITLS: apiTLS}
	img, err := a.Image()
	if err != nil {
		return err
	}
	iso := filepath.Join(*dir, "agentconfig.noarch.iso")
	// 0600: the image carries the tokens, the pull secret and the signer
	// keys (openshift-install writes its assets 0640).
	if err := atomicfile.Write(iso, img, 0o600); err != nil {
		return err
	}
	authDir := filepath.Join(*dir, "auth")
	if err := os.MkdirAll(authDir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(authDir, "kubeconfig"), st.Kubeconfig(set.ClusterDeployment.Spec.ClusterName, set.ClusterDeployment.Spec.BaseDomain), 0o600); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(authDir, "kubeadmin-password"), []byte(st.KubeadminPass), 0o600); err != nil {
		return err
	}
	// What wait-for --dir reads: node zero's address, as openshift-install
	// writes it beside its assets, and the watcher token.
	if err := atomicfile.Write(filepath.Join(*dir, rendezvousIPFile), []byte(rendezvousIP+"\n"), 0o644); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(*dir, watcherTokenFile), []byte(st.Tokens[configimage.TokenWatcher]+"\n"), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "nodezero create config-image: wrote %s (%d bytes), %s/kubeconfig, %s/kubeadmin-password and %s/watcher.token\n", iso, len(img), authDir, authDir, authDir)
	if apiTLS != nil {
		cert, ca := filepath.Join(*dir, configimage.APITLSDir, configimage.APICertFile), apiCAFile(*dir)
		if _, err := os.Stat(ca); err != nil {
			ca = cert // no ca.crt: the clients trust the certificate itself
		}
		fmt.Fprintf(stdout, "nodezero create config-image: node zero's API serves HTTPS with %s; wait-for needs --cacert %s\n", cert, ca)
	}
	return nil
}

// loadOrCreateState reads dir's state file, or makes the key, tokens,
// password and certificates and saves them (0600).
func loadOrCreateState(dir string) (*credentials.State, error) {
	p := filepath.Join(dir, stateFile)
	b, err := os.ReadFile(p)
	if err == nil {
		st, err := credentials.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (remove it to generate new credentials)", p, err)
		}
		return st, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	st, err := credentials.New(nil, time.Now().Truncate(time.Second))
	if err != nil {
		return nil, err
	}
	key, err := st.TokenKey()
	if err != nil {
		return nil, err
	}
	st.Tokens = map[string]string{}
	for _, s := range auth.Schemes {
		tok, err := credentials.SignToken(nil, key, string(s), time.Time{})
		if err != nil {
			return nil, err
		}
		st.Tokens[string(s)] = tok
	}
	st.InfraEnvID = uuid.NewString()
	b, err = st.Marshal()
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(p, b, 0o600); err != nil {
		return nil, err
	}
	return st, nil
}
