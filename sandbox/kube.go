package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/kube/localapi"
	"github.com/nodezero/nodezero/sim"
)

// The sandbox's installed cluster has a real Kubernetes API (DESIGN §9):
// when node zero reboots into its installed disk, kube/localapi starts
// etcd and kube-apiserver on the API VIP (the address the cluster's API
// name resolves to in the sandbox's DNS), serving a certificate of the
// config image's kube-apiserver-lb-signer and trusting its
// admin-kubeconfig-signer, so that install/auth/kubeconfig, the one
// `create config-image` wrote, opens it. Node zero's simulated in-cluster
// controller (sim.StatusWriter) writes the ClusterOperators' and the
// ClusterVersion's status there as the hosts join, and completes the
// install only once the ClusterVersion is Available, as the real one
// waits for the cluster version operator.

// kubeAPI is the sandbox's installed-cluster API: prepared before the
// hosts start, started once, when node zero reboots.
type kubeAPI struct {
	cfg        localapi.Config
	kubeconfig string // install/auth/kubeconfig
	payload    string
	say        func(string, ...any)

	once sync.Once
	mu   sync.Mutex
	api  *localapi.API
	mcs  *sim.MCS // the worker pool's machine config server
	err  error
	// pullSecret is install-config.yaml's, kept in the cluster's
	// openshift-config/pull-secret.
	pullSecret string
	started    chan struct{} // closed when Start has returned
}

// prepareKube points the user's auth/kubeconfig at the API VIP
// (whether or not an API will answer there: a client must never look the
// cluster's name up in this machine's resolver), finds the tools and gives
// node zero a copy of the kubeconfig for its controller. It returns nil
// when the step is skipped: mode "no", or "auto" without the tools (it
// says so in one line).
func prepareKube(o Options, installDir string, vip netip.Addr, zero *Host, say func(string, ...any)) (*kubeAPI, error) {
	zeroKC := filepath.Join(zero.root, sim.KubeconfigPath)
	if err := os.Remove(zeroKC); err != nil && !errors.Is(err, os.ErrNotExist) { // a run before this one's
		return nil, err
	}
	apiName := "api." + ClusterName + "." + BaseDomain
	kcPath := filepath.Join(installDir, "auth", "kubeconfig")
	b, err := os.ReadFile(kcPath)
	if err != nil {
		return nil, fmt.Errorf("sandbox: kube api: %w", err)
	}
	// The kubeconfig names the API https://api.<cluster>.<domain>:6443, a
	// name only the sandbox's own DNS knows: this machine's resolver must
	// not be asked. So its server becomes the VIP's address, and
	// tls-server-name keeps the certificate checked for the name. The CA
	// and the client certificate stay as create config-image wrote them.
	server := "https://" + netip.AddrPortFrom(vip, 6443).String()
	if b, err = kube.SetServer(b, kcPath, server, apiName); err != nil {
		return nil, fmt.Errorf("sandbox: kube api: %w", err)
	}
	admin, err := kube.ParseKubeconfig(b, kcPath)
	if err != nil {
		return nil, fmt.Errorf("sandbox: kube api: %w", err)
	}
	if err := os.WriteFile(kcPath, b, 0o600); err != nil {
		return nil, err
	}
	say("auth/kubeconfig: server %s (%s resolves only in the sandbox's DNS; the certificate is still checked for that name: tls-server-name)", server, apiName)
	if o.KubeAPI == "" || o.KubeAPI == "no" {
		return nil, nil
	}
	if o.NetNS {
		// kube/localapi listens in this namespace, out of the hosts' reach.
		const why = "the installed cluster's API would run on this machine's loopback, which the hosts in their namespaces cannot reach"
		if o.KubeAPI == "yes" {
			return nil, fmt.Errorf("sandbox: --kube-api yes with --netns: %s", why)
		}
		say("kube API step skipped: %s (--netns)", why)
		return nil, nil
	}
	tools, err := localapi.FindTools()
	if err != nil {
		if o.KubeAPI == "yes" {
			return nil, fmt.Errorf("sandbox: --kube-api yes: %w", err)
		}
		say("kube API step skipped: %v", err)
		return nil, nil
	}
	st, err := o.ConfigImage.State(installDir)
	if err != nil {
		return nil, err
	}
	const lbSigner, adminSigner = "kube-apiserver-lb-signer", "admin-kubeconfig-signer"
	if st.SignerCertPEM[lbSigner] == "" || st.SignerKeyPEM[lbSigner] == "" || st.SignerCertPEM[adminSigner] == "" {
		return nil, fmt.Errorf("sandbox: kube api: %s lacks the %s or %s signer (want %v)", o.ConfigImage.StateFile, lbSigner, adminSigner, credentials.Signers)
	}
	if err := os.MkdirAll(filepath.Dir(zeroKC), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(zeroKC, b, 0o600); err != nil {
		return nil, err
	}
	ic, _, rep := configimage.LoadInputs(installDir)
	if err := rep.Err(); err != nil {
		return nil, fmt.Errorf("sandbox: kube api: %w", err)
	}
	dir := filepath.Join(o.Dir, "kube-api")
	if err := os.RemoveAll(dir); err != nil { // a new cluster each run
		return nil, err
	}
	return &kubeAPI{
		cfg: localapi.Config{
			Dir: dir, Addr: vip, Names: []string{apiName, "api-int." + ClusterName + "." + BaseDomain},
			ServingSignerCert: []byte(st.SignerCertPEM[lbSigner]), ServingSignerKey: []byte(st.SignerKeyPEM[lbSigner]),
			ClientCA: []byte(st.SignerCertPEM[adminSigner]), AdminCert: admin.CertData, AdminKey: admin.KeyData,
			Tools: tools,
		},
		kubeconfig: kcPath, payload: o.Payload, say: say, started: make(chan struct{}), pullSecret: ic.PullSecret,
	}, nil
}

// start runs the API in the background, once (node zero's reboot calls
// it). wg counts the goroutine; the API lives until ctx ends or close.
func (k *kubeAPI) start(ctx context.Context, wg *sync.WaitGroup, zero *Host) {
	k.once.Do(func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(k.started)
			cfg := k.cfg
			// The cluster's id, from the record node zero's fake
			// firmware keeps (its API is down while it reboots).
			if d, err := sim.ReadBootDisk(zero.root); err == nil && d != nil {
				cfg.Cluster.ID = d.ClusterID
			}
			if p, err := diskwrite.LoadPayload(k.payload); err == nil {
				cfg.Cluster.Version, cfg.Cluster.Image = p.OpenshiftVersion, p.ReleaseImage
			}
			k.say("node zero rebooted: starting the installed cluster's Kubernetes API (etcd, kube-apiserver %s) on %s", localapi.APIServerVersion, cfg.Addr)
			began := time.Now()
			// The worker pool's machine config server (SIMULATED), what
			// a day-2 host's pointer Ignition merges from; its URL and CA
			// go into the cluster's worker-user-data-managed secret, where
			// `create node-config-image` reads them.
			mcs, err := sim.StartMCS(ctx, sim.MCSConfig{Addr: cfg.Addr, ClusterName: ClusterName, BaseDomain: BaseDomain,
				APICA: cfg.ServingSignerCert, ClientCert: cfg.AdminCert, ClientKey: cfg.AdminKey})
			if err != nil {
				k.mu.Lock()
				k.err = err
				k.mu.Unlock()
				k.say("machine config server: %v", err)
				return
			}
			k.mu.Lock()
			k.mcs = mcs
			k.mu.Unlock()
			seedWorkerIgnition(&cfg, mcs, k.pullSecret)
			api, err := localapi.Start(ctx, cfg)
			if err != nil && ctx.Err() != nil {
				return // the sandbox is stopping
			}
			k.mu.Lock()
			k.api, k.err = api, err
			k.mu.Unlock()
			if err != nil {
				k.say("kube API: %v", err)
				return
			}
			k.say("kube API up at %s in %.1f s (ClusterVersion and %d ClusterOperators, progressing)", api.URL, time.Since(began).Seconds(), len(localapi.DefaultOperators))
		}()
	})
}

// failure is why the API failed to start or stopped by itself, or nil.
func (k *kubeAPI) failure() error {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	api, err := k.api, k.err
	k.mu.Unlock()
	if err != nil {
		return fmt.Errorf("sandbox: the installed cluster's kube API: %w", err)
	}
	if api != nil {
		select {
		case <-api.Done():
			if err := api.Err(); err != nil {
				return fmt.Errorf("sandbox: the installed cluster's kube API: %w", err)
			}
		default:
		}
	}
	return nil
}

// url is the API's address once it started, else "".
func (k *kubeAPI) url() string {
	if k == nil {
		return ""
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.api == nil {
		return ""
	}
	return k.api.URL
}

// close stops the API (waiting for a start under way first).
func (k *kubeAPI) close() {
	if k == nil {
		return
	}
	k.once.Do(func() { close(k.started) }) // never started: nothing to wait for
	<-k.started
	k.mu.Lock()
	api := k.api
	k.mu.Unlock()
	if api != nil {
		api.Close()
	}
	if k.mcs != nil {
		k.mcs.Close()
	}
}

// seedWorkerIgnition has the API start with what `create node-config-image`
// reads of a cluster besides its version: the pull secret and the worker
// pool's pointer Ignition to the machine config server, with its CA.
func seedWorkerIgnition(cfg *localapi.Config, mcs *sim.MCS, pullSecret string) {
	cfg.Cluster.Name, cfg.Cluster.BaseDomain, cfg.Cluster.Platform = ClusterName, BaseDomain, "None"
	cfg.Cluster.PullSecret = []byte(pullSecret)
	cfg.Cluster.WorkerIgnitionURL, cfg.Cluster.WorkerIgnitionCA = mcs.WorkerURL(), mcs.CACert
}
